// Where the key in force comes from (the environment, the keychain, none) and whether a key
// typed here can be saved: said the same way for the model provider and web search.

import { useT } from '../../i18n';
import type { KeySource } from '../../generated/engine';

interface Props {
  /** The test id of the line (`provider-key-source`, `search-key-source`). */
  testId: string;
  keySource: KeySource;
  keychain: string;
  keychainAvailable: boolean;
}

export function KeySourceNote({ testId, keySource, keychain, keychainAvailable }: Props) {
  const t = useT();
  const source =
    keySource === 'environment'
      ? t('provider.key.environment')
      : keySource === 'keychain'
        ? t('provider.key.keychain', { keychain })
        : t('provider.key.none');
  return (
    <p className="help key-source" data-testid={testId} data-source={keySource}>
      {source}{' '}
      {keychainAvailable ? t('provider.keychain.available', { keychain }) : t('provider.keychain.unavailable')}
    </p>
  );
}
