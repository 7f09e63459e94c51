// A panel's load state: the failure to load, or "loading" until the data is there.

import { useT } from '../../i18n';

export function LoadState({ loaded, error }: { loaded: boolean; error: string | null }) {
  const t = useT();
  if (error) return <p className="banner error" role="alert">{t('settings.loadFailed', { message: error })}</p>;
  if (!loaded) return <p className="muted">{t('settings.loading')}</p>;
  return null;
}
