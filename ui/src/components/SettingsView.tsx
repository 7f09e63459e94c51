// The settings view: the model provider (kind, address, model, key; test and save; a local
// Ollama offered when one runs), the desktop's quick-ask shortcut (in the desktop app only),
// the standing instructions (the bootstrap files AGENTS.md, SOUL.md, USER.md, TOOLS.md: edit,
// save, restore the default), approval rules (list, add, remove), the MCP servers (their
// state; add, edit, remove, turn on and off) and the recent gate decisions. Each panel loads
// its own data through the transport.

import { type FormEvent, type KeyboardEvent, useCallback, useEffect, useState } from 'react';
import type { ShortcutStatus } from '../desktopTypes';
import { type MessageKey, useT } from '../i18n';
import type {
  AuditEntry,
  BootstrapFile,
  ConnectionReport,
  McpServerConfig,
  McpServerStatus,
  OllamaInfo,
  ProviderKind,
  ProviderSettings,
  ProviderView,
  Rule,
  RuleDecision,
  RuleScope,
} from '../settingsTypes';
import { providerUpdate } from '../settingsTypes';
import {
  EMPTY_MCP_FORM,
  type McpForm,
  type McpFormTransport,
  commandLine,
  configFromForm,
  formFromConfig,
} from '../mcpForm';
import { type DesktopBridge, type Transport, TransportError } from '../transport';

type SettingsTransport = Pick<
  Transport,
  | 'listRules'
  | 'addRule'
  | 'removeRule'
  | 'mcpServers'
  | 'mcpConfig'
  | 'setMcpConfig'
  | 'approvals'
  | 'provider'
  | 'updateProvider'
  | 'testProvider'
  | 'detectOllama'
  | 'bootstrapFiles'
  | 'saveBootstrapFile'
  | 'desktop'
>;

type ProviderTransport = Pick<Transport, 'provider' | 'updateProvider' | 'testProvider' | 'detectOllama'>;

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Loads `load()` on mount and on `reload()`; keeps the last value (or one set) or the error. */
function useLoaded<T>(load: () => Promise<T>) {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      setValue(await load());
      setError(null);
    } catch (e) {
      setError(message(e));
    }
  }, [load]);
  useEffect(() => {
    let live = true;
    load().then(
      (v) => live && (setValue(v), setError(null)),
      (e: unknown) => live && setError(message(e)),
    );
    return () => {
      live = false;
    };
  }, [load]);
  return { value, error, reload, setValue };
}

function LoadState({ loaded, error }: { loaded: boolean; error: string | null }) {
  const t = useT();
  if (error) return <p className="banner error" role="alert">{t('settings.loadFailed', { message: error })}</p>;
  if (!loaded) return <p className="muted">{t('settings.loading')}</p>;
  return null;
}

/** The provider kinds, in the order the select offers them. */
const KINDS: ProviderKind[] = ['openai', 'anthropic', 'ollama'];

/** Each kind's usual base URL. */
export const DEFAULT_BASE_URLS: Record<ProviderKind, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  ollama: 'http://127.0.0.1:11434/v1',
};

/** The provider form as typed: fallbacks comma-separated, the key never prefilled. */
interface ProviderForm {
  kind: ProviderKind;
  baseUrl: string;
  model: string;
  fallbacks: string;
  apiKey: string;
}

function formFrom(s: ProviderSettings): ProviderForm {
  return { kind: s.kind, baseUrl: s.base_url, model: s.model, fallbacks: s.fallback_models.join(', '), apiKey: '' };
}

function settingsFrom(f: ProviderForm): ProviderSettings {
  return {
    kind: f.kind,
    base_url: f.baseUrl.trim(),
    model: f.model.trim(),
    fallback_models: f.fallbacks
      .split(',')
      .map((m) => m.trim())
      .filter((m) => m !== ''),
  };
}

/** A finished connection test, or the transport's failure to run one. */
type TestOutcome = ConnectionReport | { ok: false; code: string; message: string; latency_ms?: undefined };

function KeySourceNote({ view }: { view: ProviderView }) {
  const t = useT();
  const source =
    view.key_source === 'environment'
      ? t('provider.key.environment')
      : view.key_source === 'keychain'
        ? t('provider.key.keychain', { keychain: view.keychain })
        : t('provider.key.none');
  return (
    <p className="help key-source" data-testid="provider-key-source" data-source={view.key_source}>
      {source}{' '}
      {view.keychain_available
        ? t('provider.keychain.available', { keychain: view.keychain })
        : t('provider.keychain.unavailable')}
    </p>
  );
}

interface ProviderFormProps {
  transport: ProviderTransport;
  view: ProviderView;
  onSaved: (view: ProviderView) => void;
}

/** The form, started from the loaded settings. */
function ProviderEditor({ transport, view, onSaved }: ProviderFormProps) {
  const t = useT();
  const [form, setForm] = useState<ProviderForm>(() => formFrom(view.settings));
  const [kindChanged, setKindChanged] = useState(false);
  const [ollama, setOllama] = useState<OllamaInfo | null>(null);
  const [busy, setBusy] = useState<'test' | 'save' | null>(null);
  const [tested, setTested] = useState<TestOutcome | null>(null);
  const [notice, setNotice] = useState<'saved' | 'keyRemoved' | null>(null);
  const [saveError, setSaveError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    transport.detectOllama().then(
      (info) => live && setOllama(info),
      () => {
        // Detection is a convenience: no offer when it fails.
      },
    );
    return () => {
      live = false;
    };
  }, [transport]);

  /** Any edit makes the last test result and "saved" stale. */
  const edit = (change: Partial<ProviderForm>) => {
    setForm((f) => ({ ...f, ...change }));
    setTested(null);
    setNotice(null);
  };

  const changeKind = (kind: ProviderKind) => {
    const url = form.baseUrl.trim();
    // An empty address or another kind's usual one is replaced; a custom one is kept and the
    // new kind's usual address offered instead.
    const replace = url === '' || Object.values(DEFAULT_BASE_URLS).includes(url);
    edit({ kind, ...(replace ? { baseUrl: DEFAULT_BASE_URLS[kind] } : {}) });
    setKindChanged(true);
  };

  const adoptOllama = (info: OllamaInfo) => {
    edit({
      kind: 'ollama',
      baseUrl: info.base_url,
      model: info.models.includes(form.model.trim()) ? form.model : (info.models[0] ?? form.model),
    });
    setKindChanged(false);
  };

  const test = async () => {
    setBusy('test');
    setTested(null);
    try {
      setTested(await transport.testProvider(providerUpdate(settingsFrom(form), form.apiKey)));
    } catch (e) {
      setTested({ ok: false, code: e instanceof TransportError ? e.code : 'error', message: message(e) });
    } finally {
      setBusy(null);
    }
  };

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy('save');
    setNotice(null);
    try {
      const saved = await transport.updateProvider(providerUpdate(settingsFrom(form), form.apiKey));
      onSaved(saved);
      setForm((f) => ({ ...f, apiKey: '' }));
      setSaveError(null);
      setNotice('saved');
    } catch (err) {
      setSaveError(message(err));
    } finally {
      setBusy(null);
    }
  };

  const clearKey = async () => {
    setBusy('save');
    setNotice(null);
    try {
      onSaved(await transport.updateProvider(providerUpdate(view.settings, '', true)));
      setSaveError(null);
      setNotice('keyRemoved');
    } catch (err) {
      setSaveError(message(err));
    } finally {
      setBusy(null);
    }
  };

  const usingOllama = ollama !== null && form.kind === 'ollama' && form.baseUrl.trim() === ollama.base_url;
  const models =
    usingOllama && ollama.models.length > 0
      ? ollama.models.includes(form.model) || form.model === ''
        ? ollama.models
        : [form.model, ...ollama.models]
      : null;
  const defaultUrl = DEFAULT_BASE_URLS[form.kind];

  return (
    <form className="provider-form" onSubmit={(e) => void save(e)}>
      {ollama && !usingOllama && (
        <div className="notice ollama-offer" data-testid="ollama-offer">
          <span>
            {ollama.models.length === 1 ? t('ollama.offerOne') : t('ollama.offer', { count: ollama.models.length })}
          </span>
          <button type="button" data-testid="ollama-use" onClick={() => adoptOllama(ollama)}>
            {t('ollama.use')}
          </button>
        </div>
      )}
      {view.env_overrides.length > 0 && (
        <p className="notice warn env-overrides" data-testid="provider-env">
          {t('provider.envOverrides', { names: view.env_overrides.join(', ') })}
        </p>
      )}
      <div className="field-grid">
        <label>
          <span>{t('provider.kind')}</span>
          <select
            data-testid="provider-kind"
            value={form.kind}
            onChange={(e) => changeKind(e.target.value as ProviderKind)}
          >
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {t(`provider.kind.${k}` as MessageKey)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('provider.baseUrl')}</span>
          <input
            data-testid="provider-base-url"
            type="url"
            value={form.baseUrl}
            placeholder={defaultUrl}
            onChange={(e) => edit({ baseUrl: e.target.value })}
          />
        </label>
        {kindChanged && form.baseUrl.trim() !== defaultUrl && (
          <p className="field-note" data-testid="provider-default-url">
            {t('provider.defaultUrl', { kind: t(`provider.kind.${form.kind}` as MessageKey), url: defaultUrl })}{' '}
            <button type="button" onClick={() => edit({ baseUrl: defaultUrl })}>
              {t('provider.useDefaultUrl')}
            </button>
          </p>
        )}
        <label>
          <span>{t('provider.model')}</span>
          {models ? (
            <select data-testid="provider-model" value={form.model} onChange={(e) => edit({ model: e.target.value })}>
              {form.model === '' && <option value="" />}
              {models.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          ) : (
            <input data-testid="provider-model" value={form.model} onChange={(e) => edit({ model: e.target.value })} />
          )}
        </label>
        <label>
          <span>{t('provider.fallbacks')}</span>
          <input
            data-testid="provider-fallbacks"
            value={form.fallbacks}
            placeholder={t('provider.fallbacksPlaceholder')}
            onChange={(e) => edit({ fallbacks: e.target.value })}
          />
        </label>
        <label>
          <span>{t('provider.apiKey')}</span>
          <input
            data-testid="provider-api-key"
            type="password"
            autoComplete="off"
            value={form.apiKey}
            placeholder={t('provider.apiKeyPlaceholder')}
            onChange={(e) => edit({ apiKey: e.target.value })}
          />
        </label>
      </div>
      <KeySourceNote view={view} />
      <div className="form-actions">
        <button type="button" data-testid="provider-test" disabled={busy !== null} onClick={() => void test()}>
          {busy === 'test' ? t('provider.testing') : t('provider.test')}
        </button>
        <button type="submit" className="primary" data-testid="provider-save" disabled={busy !== null}>
          {t('provider.save')}
        </button>
        {view.key_source === 'keychain' && (
          <button
            type="button"
            className="danger"
            data-testid="provider-clear-key"
            disabled={busy !== null}
            onClick={() => void clearKey()}
          >
            {t('provider.clearKey')}
          </button>
        )}
      </div>
      {tested && (
        <p
          className={tested.ok ? 'test-result ok' : 'test-result failed'}
          data-testid="provider-test-result"
          data-ok={tested.ok}
          role={tested.ok ? 'status' : 'alert'}
        >
          {tested.ok
            ? t('provider.testOk', { message: tested.message })
            : t('provider.testFailed', { code: tested.code, message: tested.message })}
        </p>
      )}
      {notice && (
        <p className="saved" data-testid="provider-saved" role="status">
          {notice === 'saved' ? t('provider.saved') : t('provider.keyRemoved')}
        </p>
      )}
      {saveError && (
        <p className="turn-error" data-testid="provider-error" role="alert">
          {t('provider.failed', { message: saveError })}
        </p>
      )}
    </form>
  );
}

export function ProviderPanel({ transport }: { transport: ProviderTransport }) {
  const t = useT();
  const load = useCallback(() => transport.provider(), [transport]);
  const { value: loaded, error } = useLoaded(load);
  const [saved, setSaved] = useState<ProviderView | null>(null);
  const view = saved ?? loaded;
  return (
    <section className="panel provider-panel" aria-labelledby="provider-heading">
      <h2 id="provider-heading">{t('provider.heading')}</h2>
      <p className="help">{t('provider.help')}</p>
      <LoadState loaded={view !== undefined} error={error} />
      {view && <ProviderEditor transport={transport} view={view} onSaved={setSaved} />}
    </section>
  );
}

type ShortcutBridge = Pick<DesktopBridge, 'quickShortcut' | 'setQuickShortcut'>;

function ShortcutEditor({ desktop, initial }: { desktop: ShortcutBridge; initial: ShortcutStatus }) {
  const t = useT();
  const [status, setStatus] = useState(initial);
  const [value, setValue] = useState(initial.shortcut);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);

  const apply = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      setStatus(await desktop.setQuickShortcut(value.trim()));
      setFailure(null);
    } catch (err) {
      setFailure(message(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="shortcut-form" onSubmit={(e) => void apply(e)}>
      <label>
        <span>{t('desktop.shortcut')}</span>
        <input
          data-testid="shortcut-input"
          value={value}
          spellCheck={false}
          onChange={(e) => setValue(e.target.value)}
        />
      </label>
      <button type="submit" className="primary" data-testid="shortcut-apply" disabled={busy || value.trim() === ''}>
        {t('desktop.apply')}
      </button>
      <p
        className={status.registered ? 'shortcut-status ok' : 'shortcut-status failed'}
        data-testid="shortcut-status"
        data-registered={status.registered}
      >
        {status.registered
          ? t('desktop.registered', { shortcut: status.shortcut })
          : status.error
            ? t('desktop.notRegisteredBecause', { error: status.error })
            : t('desktop.notRegistered')}
      </p>
      {failure && (
        <p className="turn-error" data-testid="shortcut-error" role="alert">
          {t('desktop.failed', { message: failure })}
        </p>
      )}
    </form>
  );
}

export function DesktopPanel({ desktop }: { desktop: ShortcutBridge }) {
  const t = useT();
  const load = useCallback(() => desktop.quickShortcut(), [desktop]);
  const { value: status, error } = useLoaded(load);
  return (
    <section className="panel desktop-panel" aria-labelledby="desktop-heading">
      <h2 id="desktop-heading">{t('desktop.heading')}</h2>
      <p className="help">{t('desktop.help')}</p>
      <LoadState loaded={status !== undefined} error={error} />
      {status && <ShortcutEditor desktop={desktop} initial={status} />}
    </section>
  );
}

type BootstrapTransport = Pick<Transport, 'bootstrapFiles' | 'saveBootstrapFile'>;

/** What each bootstrap file is for, by name. */
const BOOTSTRAP_ABOUT: Record<string, MessageKey> = {
  'AGENTS.md': 'bootstrap.about.agents',
  'SOUL.md': 'bootstrap.about.soul',
  'USER.md': 'bootstrap.about.user',
  'TOOLS.md': 'bootstrap.about.tools',
};

/** The last save or restore of a file, or its failure. */
type BootstrapStatus =
  | { name: string; kind: 'saved' | 'restored' }
  | { name: string; kind: 'saveFailed' | 'restoreFailed'; message: string };

/** `record` without `key`. */
function without(record: Record<string, string>, key: string): Record<string, string> {
  const rest = { ...record };
  delete rest[key];
  return rest;
}

/**
 * The standing instructions: one tab per bootstrap file, its text in a monospace box, Save
 * and Restore default (confirmed inline). Unsaved text is kept per file while switching tabs
 * (the tab is marked) and only dropped by Discard, a save or a restore.
 */
export function BootstrapPanel({ transport }: { transport: BootstrapTransport }) {
  const t = useT();
  const load = useCallback(() => transport.bootstrapFiles(), [transport]);
  const { value: files, error, setValue: setFiles } = useLoaded(load);
  const [selected, setSelected] = useState<string | null>(null);
  /** Unsaved text by file name. */
  const [drafts, setDrafts] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [status, setStatus] = useState<BootstrapStatus | null>(null);

  const file = files?.find((f) => f.name === selected) ?? files?.[0];
  const textOf = (f: BootstrapFile) => drafts[f.name] ?? f.content;
  const dirty = (f: BootstrapFile) => f.name in drafts && drafts[f.name] !== f.content;

  const select = (name: string) => {
    if (name === file?.name) return;
    setSelected(name);
    setConfirming(false);
    setStatus(null);
  };

  const onTabKey = (e: KeyboardEvent<HTMLButtonElement>, index: number) => {
    if (!files || (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft')) return;
    e.preventDefault();
    const next = files[(index + (e.key === 'ArrowRight' ? 1 : files.length - 1)) % files.length];
    if (!next) return;
    select(next.name);
    const tabs = e.currentTarget.parentElement?.querySelectorAll<HTMLButtonElement>('[role="tab"]');
    tabs?.[files.indexOf(next)]?.focus();
  };

  const edit = (name: string, text: string) => {
    setDrafts((d) => ({ ...d, [name]: text }));
    setStatus((s) => (s && (s.kind === 'saved' || s.kind === 'restored') ? null : s));
  };

  const discard = (name: string) => {
    setDrafts((d) => without(d, name));
    setStatus(null);
  };

  /** Saves `content` (or restores the default for `null`) and shows the file as it now is. */
  const store = async (name: string, content: string | null) => {
    setBusy(true);
    setStatus(null);
    try {
      const saved = await transport.saveBootstrapFile(name, content);
      setFiles((all) => all?.map((f) => (f.name === saved.name ? saved : f)));
      // A restore drops the draft; a save drops it unless it changed meanwhile.
      setDrafts((d) => (content === null || d[name] === content ? without(d, name) : d));
      setStatus({ name, kind: content === null ? 'restored' : 'saved' });
    } catch (e) {
      setStatus({ name, kind: content === null ? 'restoreFailed' : 'saveFailed', message: message(e) });
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };

  const shown = status && file && status.name === file.name ? status : null;
  const about = file ? BOOTSTRAP_ABOUT[file.name] : undefined;

  return (
    <section className="panel bootstrap-panel" aria-labelledby="bootstrap-heading">
      <h2 id="bootstrap-heading">{t('bootstrap.heading')}</h2>
      <p className="help">{t('bootstrap.help')}</p>
      <LoadState loaded={files !== undefined} error={error} />
      {files && file && (
        <>
          <div className="bootstrap-tabs" role="tablist" aria-label={t('bootstrap.files')}>
            {files.map((f, i) => (
              <button
                key={f.name}
                type="button"
                role="tab"
                id={`bootstrap-tab-${f.name}`}
                aria-selected={f.name === file.name}
                aria-controls="bootstrap-editor"
                tabIndex={f.name === file.name ? 0 : -1}
                data-testid="bootstrap-tab"
                data-file={f.name}
                data-dirty={dirty(f)}
                onClick={() => select(f.name)}
                onKeyDown={(e) => onTabKey(e, i)}
              >
                {f.name}
                {dirty(f) && (
                  <span className="bootstrap-dirty" title={t('bootstrap.unsaved')} aria-label={t('bootstrap.unsaved')}>
                    {' ●'}
                  </span>
                )}
              </button>
            ))}
          </div>
          <div
            className="bootstrap-editor"
            id="bootstrap-editor"
            role="tabpanel"
            aria-labelledby={`bootstrap-tab-${file.name}`}
            data-file={file.name}
          >
            <div className="bootstrap-head">
              <p className="bootstrap-about" data-testid="bootstrap-about">
                {about ? t(about) : null}
              </p>
              {file.is_default && (
                <span className="badge bootstrap-default" data-testid="bootstrap-default">
                  {t('bootstrap.default')}
                </span>
              )}
            </div>
            <textarea
              className="bootstrap-text"
              data-testid="bootstrap-text"
              rows={14}
              spellCheck={false}
              value={textOf(file)}
              disabled={busy}
              aria-label={t('bootstrap.textLabel', { name: file.name })}
              aria-describedby="bootstrap-comments"
              onChange={(e) => edit(file.name, e.target.value)}
            />
            <p className="bootstrap-note" id="bootstrap-comments">
              {t('bootstrap.comments')}
            </p>
            <p className="bootstrap-path" data-testid="bootstrap-path">
              {file.is_default ? t('bootstrap.pathDefault') : t('bootstrap.pathSaved')} <code>{file.path}</code>
            </p>
            {confirming ? (
              <div className="form-actions bootstrap-confirm" data-testid="bootstrap-confirm">
                <span>{t('bootstrap.restoreConfirm', { name: file.name })}</span>
                <button
                  type="button"
                  className="danger"
                  data-testid="bootstrap-restore-yes"
                  disabled={busy}
                  onClick={() => void store(file.name, null)}
                >
                  {t('bootstrap.restoreYes')}
                </button>
                <button type="button" data-testid="bootstrap-restore-no" disabled={busy} onClick={() => setConfirming(false)}>
                  {t('bootstrap.restoreNo')}
                </button>
              </div>
            ) : (
              <div className="form-actions">
                <button
                  type="button"
                  className="primary"
                  data-testid="bootstrap-save"
                  disabled={busy || !dirty(file)}
                  onClick={() => void store(file.name, textOf(file))}
                >
                  {busy ? t('bootstrap.saving') : t('bootstrap.save')}
                </button>
                {dirty(file) && (
                  <button type="button" data-testid="bootstrap-discard" disabled={busy} onClick={() => discard(file.name)}>
                    {t('bootstrap.discard')}
                  </button>
                )}
                <button
                  type="button"
                  className="danger"
                  data-testid="bootstrap-restore"
                  disabled={busy || file.is_default}
                  onClick={() => {
                    setConfirming(true);
                    setStatus(null);
                  }}
                >
                  {t('bootstrap.restore')}
                </button>
              </div>
            )}
            {shown && (shown.kind === 'saved' || shown.kind === 'restored') && (
              <p className="saved" data-testid="bootstrap-saved" role="status">
                {shown.kind === 'saved'
                  ? t('bootstrap.saved', { name: shown.name })
                  : t('bootstrap.restored', { name: shown.name })}
              </p>
            )}
            {shown && (shown.kind === 'saveFailed' || shown.kind === 'restoreFailed') && (
              <p className="turn-error" data-testid="bootstrap-error" role="alert">
                {shown.kind === 'saveFailed'
                  ? t('bootstrap.failed', { message: shown.message })
                  : t('bootstrap.restoreFailed', { message: shown.message })}
              </p>
            )}
          </div>
        </>
      )}
    </section>
  );
}

const DECISIONS: RuleDecision[] = ['allow', 'ask', 'deny'];
const SCOPES: RuleScope[] = ['always', 'session'];

interface RulesProps {
  transport: Pick<Transport, 'listRules' | 'addRule' | 'removeRule'>;
  /** The selected chat session, offered for session rules. */
  session: string | null;
}

export function RulesPanel({ transport, session }: RulesProps) {
  const t = useT();
  const load = useCallback(() => transport.listRules(), [transport]);
  const { value: rules, error, reload } = useLoaded(load);
  const [tool, setTool] = useState('');
  const [pattern, setPattern] = useState('');
  const [decision, setDecision] = useState<RuleDecision>('allow');
  const [scope, setScope] = useState<RuleScope>('always');
  const [sessionName, setSessionName] = useState(session ?? '');
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    try {
      await transport.addRule({
        tool: tool.trim(),
        ...(pattern.trim() ? { pattern: pattern.trim() } : {}),
        decision,
        scope,
        ...(scope === 'session' && sessionName.trim() ? { session: sessionName.trim() } : {}),
      });
      setFormError(null);
      setTool('');
      setPattern('');
      await reload();
    } catch (err) {
      setFormError(message(err));
    } finally {
      setBusy(false);
    }
  };

  const remove = async (id: string) => {
    try {
      await transport.removeRule(id);
      setFormError(null);
    } catch (err) {
      setFormError(message(err));
    }
    await reload();
  };

  return (
    <section className="panel rules-panel" aria-labelledby="rules-heading">
      <h2 id="rules-heading">{t('rules.heading')}</h2>
      <p className="help">{t('rules.help')}</p>
      <LoadState loaded={rules !== undefined} error={error} />
      {rules && rules.length === 0 && <p className="muted rules-empty">{t('rules.empty')}</p>}
      {rules && rules.length > 0 && (
        <table className="settings-table rules">
          <thead>
            <tr>
              <th>{t('rules.tool')}</th>
              <th>{t('rules.pattern')}</th>
              <th>{t('rules.decision')}</th>
              <th>{t('rules.scope')}</th>
              <th>{t('rules.id')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {rules.map((r: Rule) => (
              <tr key={r.id} data-rule-id={r.id}>
                <td><code>{r.tool}</code></td>
                <td>{r.pattern === null ? <span className="muted">{t('rules.any')}</span> : <code>{r.pattern}</code>}</td>
                <td><span className={`decision decision-${r.decision}`}>{t(`rules.decision.${r.decision}` as MessageKey)}</span></td>
                <td>
                  {r.scope === 'session'
                    ? t('rules.inSession', { name: r.session_id ?? '?' })
                    : t(`rules.scope.${r.scope}` as MessageKey)}
                </td>
                <td><code className="muted">{r.id}</code></td>
                <td>
                  <button type="button" className="danger remove-rule" onClick={() => void remove(r.id)}>
                    {t('rules.remove')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form className="rule-form" onSubmit={(e) => void submit(e)}>
        <label>
          <span>{t('rules.tool')}</span>
          <input name="tool" value={tool} required placeholder="shell" onChange={(e) => setTool(e.target.value)} />
        </label>
        <label>
          <span>{t('rules.pattern')}</span>
          <input
            name="pattern"
            value={pattern}
            placeholder={t('rules.patternPlaceholder')}
            onChange={(e) => setPattern(e.target.value)}
          />
        </label>
        <label>
          <span>{t('rules.decision')}</span>
          <select name="decision" value={decision} onChange={(e) => setDecision(e.target.value as RuleDecision)}>
            {DECISIONS.map((d) => (
              <option key={d} value={d}>{t(`rules.decision.${d}` as MessageKey)}</option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('rules.scope')}</span>
          <select name="scope" value={scope} onChange={(e) => setScope(e.target.value as RuleScope)}>
            {SCOPES.map((s) => (
              <option key={s} value={s}>{t(`rules.scope.${s}` as MessageKey)}</option>
            ))}
          </select>
        </label>
        {scope === 'session' && (
          <label>
            <span>{t('rules.session')}</span>
            <input name="session" value={sessionName} onChange={(e) => setSessionName(e.target.value)} />
          </label>
        )}
        <button type="submit" className="primary add-rule" disabled={busy}>
          {t('rules.add')}
        </button>
      </form>
      {formError && <p className="turn-error rule-error" role="alert">{t('rules.failed', { message: formError })}</p>}
    </section>
  );
}

type McpTransport = Pick<Transport, 'mcpServers' | 'mcpConfig' | 'setMcpConfig'>;

/** After a save the states are read again every second, ten times at most (or until none starts). */
const MCP_POLL_MS = 1000;
const MCP_POLL_TRIES = 10;

/** The open form: a new server (`original` null) or the configured one of that name. */
interface McpEditing {
  original: string | null;
  form: McpForm;
}

function isHttp(c: McpServerConfig): boolean {
  return c.url !== null && c.command === null;
}

function McpStateCell({ status }: { status: McpServerStatus | undefined }) {
  const t = useT();
  if (!status) return <span className="muted">{t('mcp.state.unknown')}</span>;
  return (
    <>
      <span className={`state state-${status.state}`}>{t(`mcp.state.${status.state}` as MessageKey)}</span>
      {status.restarts > 0 && <span className="muted"> · {t('mcp.restarted', { count: status.restarts })}</span>}
      {status.error && <div className="error-text">{status.error}</div>}
    </>
  );
}

/** One configured server: how it runs, with env and header names but never their values. */
function McpRunsCell({ config }: { config: McpServerConfig }) {
  const t = useT();
  const env = Object.keys(config.env);
  const headers = Object.keys(config.headers);
  return (
    <>
      <span className="badge mcp-kind">{isHttp(config) ? t('mcp.kind.http') : t('mcp.kind.stdio')}</span>{' '}
      <code className="mcp-target">{isHttp(config) ? config.url : commandLine(config)}</code>
      {env.length > 0 && <div className="mcp-secret-names">{t('mcp.envKeys', { keys: env.join(', ') })}</div>}
      {headers.length > 0 && (
        <div className="mcp-secret-names">{t('mcp.headerNames', { names: headers.join(', ') })}</div>
      )}
    </>
  );
}

interface McpFormProps {
  editing: McpEditing;
  busy: boolean;
  onChange: (change: Partial<McpForm>) => void;
  onSubmit: (e: FormEvent) => void;
  onCancel: () => void;
}

/**
 * The add/edit form. Environment and header values may be secrets: their boxes are masked
 * (like a password field, keys included) until "Show values" is ticked.
 */
function McpServerForm({ editing, busy, onChange, onSubmit, onCancel }: McpFormProps) {
  const t = useT();
  const [reveal, setReveal] = useState(false);
  const { form } = editing;
  const secretClass = reveal ? 'secret-text revealed' : 'secret-text';
  return (
    <form className="mcp-form" aria-labelledby="mcp-form-heading" noValidate onSubmit={onSubmit}>
      <h3 id="mcp-form-heading">
        {editing.original === null ? t('mcp.formAdd') : t('mcp.formEdit', { name: editing.original })}
      </h3>
      <div className="field-grid">
        <div className="field">
          <label>
            <span>{t('mcp.name')}</span>
            <input
              data-testid="mcp-name"
              value={form.name}
              autoFocus
              autoComplete="off"
              spellCheck={false}
              placeholder="github"
              aria-describedby="mcp-name-help"
              onChange={(e) => onChange({ name: e.target.value })}
            />
          </label>
          <small id="mcp-name-help">{t('mcp.nameHelp')}</small>
        </div>
        <label>
          <span>{t('mcp.transport')}</span>
          <select
            data-testid="mcp-transport"
            value={form.transport}
            onChange={(e) => onChange({ transport: e.target.value as McpFormTransport })}
          >
            <option value="stdio">{t('mcp.transport.stdio')}</option>
            <option value="http">{t('mcp.transport.http')}</option>
          </select>
        </label>
        {form.transport === 'stdio' ? (
          <>
            <label>
              <span>{t('mcp.command')}</span>
              <input
                data-testid="mcp-command"
                value={form.command}
                spellCheck={false}
                placeholder="npx"
                onChange={(e) => onChange({ command: e.target.value })}
              />
            </label>
            <div className="field">
              <label>
                <span>{t('mcp.args')}</span>
                <input
                  data-testid="mcp-args"
                  value={form.args}
                  spellCheck={false}
                  placeholder="-y @modelcontextprotocol/server-github"
                  aria-describedby="mcp-args-help"
                  onChange={(e) => onChange({ args: e.target.value })}
                />
              </label>
              <small id="mcp-args-help">{t('mcp.argsHelp')}</small>
            </div>
            <label className="wide">
              <span>{t('mcp.env')}</span>
              <textarea
                data-testid="mcp-env"
                className={secretClass}
                rows={3}
                value={form.env}
                autoComplete="off"
                spellCheck={false}
                placeholder={t('mcp.envPlaceholder')}
                onChange={(e) => onChange({ env: e.target.value })}
              />
            </label>
          </>
        ) : (
          <>
            <label className="wide">
              <span>{t('mcp.url')}</span>
              <input
                data-testid="mcp-url"
                type="url"
                value={form.url}
                spellCheck={false}
                placeholder="https://example.com/mcp"
                onChange={(e) => onChange({ url: e.target.value })}
              />
            </label>
            <label className="wide">
              <span>{t('mcp.headers')}</span>
              <textarea
                data-testid="mcp-headers"
                className={secretClass}
                rows={3}
                value={form.headers}
                autoComplete="off"
                spellCheck={false}
                placeholder={t('mcp.headersPlaceholder')}
                onChange={(e) => onChange({ headers: e.target.value })}
              />
            </label>
          </>
        )}
        <label className="check">
          <input type="checkbox" checked={reveal} onChange={(e) => setReveal(e.target.checked)} />
          <span>{t('mcp.showValues')}</span>
        </label>
        <label className="check">
          <input
            data-testid="mcp-enabled"
            type="checkbox"
            checked={form.enabled}
            onChange={(e) => onChange({ enabled: e.target.checked })}
          />
          <span>{t('mcp.enabledField')}</span>
        </label>
      </div>
      <div className="form-actions">
        <button type="submit" className="primary" data-testid="mcp-save" disabled={busy}>
          {busy ? t('mcp.saving') : t('mcp.save')}
        </button>
        <button type="button" onClick={onCancel}>
          {t('mcp.cancel')}
        </button>
      </div>
    </form>
  );
}

/**
 * The MCP servers: the configured list with each one's live state, and an editor. Every change
 * (save, remove, toggle) sends the whole list, which the engine saves and applies at once;
 * the states are then read again until the servers have started.
 */
export function McpPanel({ transport }: { transport: McpTransport }) {
  const t = useT();
  const loadConfig = useCallback(() => transport.mcpConfig(), [transport]);
  const { value: configs, error: configError, setValue: setConfigs } = useLoaded(loadConfig);
  const loadStates = useCallback(() => transport.mcpServers(), [transport]);
  const { value: states, error: statesError, reload, setValue: setStates } = useLoaded(loadStates);
  const [editing, setEditing] = useState<McpEditing | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  /** Bumped by each save that left servers starting; starts a round of polling. */
  const [pollRound, setPollRound] = useState(0);

  useEffect(() => {
    if (pollRound === 0) return;
    let live = true;
    let left = MCP_POLL_TRIES;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      left -= 1;
      try {
        const next = await loadStates();
        if (!live) return;
        setStates(next);
        if (!next.some((s) => s.state === 'starting')) return;
      } catch {
        // Keep the last states; the next tick tries again.
      }
      if (live && left > 0) timer = setTimeout(() => void tick(), MCP_POLL_MS);
    };
    timer = setTimeout(() => void tick(), MCP_POLL_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [pollRound, loadStates, setStates]);

  /** Sends the whole list; true when the engine took it. */
  const apply = async (next: McpServerConfig[]): Promise<boolean> => {
    setBusy(true);
    setSaved(false);
    try {
      const result = await transport.setMcpConfig(next);
      setConfigs(next);
      setStates(result);
      setFailure(null);
      setSaved(true);
      if (result.some((s) => s.state === 'starting')) setPollRound((r) => r + 1);
      return true;
    } catch (e) {
      setFailure(message(e));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const open = (next: McpEditing) => {
    setEditing(next);
    setSaved(false);
    setFailure(null);
  };

  const change = (patch: Partial<McpForm>) => {
    setEditing((e) => e && { ...e, form: { ...e.form, ...patch } });
    setSaved(false);
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!editing || !configs) return;
    const base = configs.find((c) => c.name === editing.original);
    const checked = configFromForm(
      editing.form,
      configs.filter((c) => c !== base),
      base,
    );
    if (!checked.ok) {
      setSaved(false);
      setFailure(t(checked.problem.key, checked.problem.vars));
      return;
    }
    // An edited entry keeps its place; a new one (or one removed meanwhile) goes last.
    const next = base ? configs.map((c) => (c === base ? checked.value : c)) : [...configs, checked.value];
    if (await apply(next)) setEditing(null);
  };

  const remove = async (name: string) => {
    if (!configs) return;
    if ((await apply(configs.filter((c) => c.name !== name))) && editing?.original === name) setEditing(null);
  };

  const toggle = async (name: string) => {
    if (!configs) return;
    const next = configs.map((c) => (c.name === name ? { ...c, enabled: !c.enabled } : c));
    if ((await apply(next)) && editing?.original === name) {
      const enabled = next.find((c) => c.name === name)?.enabled ?? true;
      setEditing((e) => e && { ...e, form: { ...e.form, enabled } });
    }
  };

  return (
    <section className="panel mcp-panel" aria-labelledby="mcp-heading">
      <div className="panel-head">
        <h2 id="mcp-heading">{t('mcp.heading')}</h2>
        <div className="form-actions">
          <button type="button" className="refresh-mcp" onClick={() => void reload()}>
            {t('mcp.refresh')}
          </button>
          <button
            type="button"
            data-testid="mcp-add"
            disabled={configs === undefined || busy}
            onClick={() => editing?.original !== null && open({ original: null, form: EMPTY_MCP_FORM })}
          >
            {t('mcp.add')}
          </button>
        </div>
      </div>
      <p className="help">{t('mcp.hint')}</p>
      <LoadState loaded={configs !== undefined} error={configError ?? statesError} />
      {configs && configs.length === 0 && <p className="muted mcp-empty">{t('mcp.empty')}</p>}
      {configs && configs.length > 0 && (
        <table className="settings-table mcp-servers">
          <thead>
            <tr>
              <th>{t('mcp.name')}</th>
              <th>{t('mcp.runs')}</th>
              <th>{t('mcp.state')}</th>
              <th>{t('mcp.tools')}</th>
              <th>{t('mcp.enabled')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {configs.map((c) => {
              const status = states?.find((s) => s.name === c.name);
              return (
                <tr key={c.name} data-server={c.name} className={c.enabled ? undefined : 'off'}>
                  <td><code>{c.name}</code></td>
                  <td className="mcp-runs"><McpRunsCell config={c} /></td>
                  <td><McpStateCell status={status} /></td>
                  <td>{status ? status.tools : ''}</td>
                  <td>
                    <input
                      type="checkbox"
                      data-testid="mcp-toggle"
                      checked={c.enabled}
                      disabled={busy}
                      aria-label={t('mcp.toggleLabel', { name: c.name })}
                      onChange={() => void toggle(c.name)}
                    />
                  </td>
                  <td className="row-actions">
                    <button
                      type="button"
                      data-testid="mcp-edit"
                      aria-label={t('mcp.editLabel', { name: c.name })}
                      disabled={busy}
                      onClick={() => open({ original: c.name, form: formFromConfig(c) })}
                    >
                      {t('mcp.edit')}
                    </button>
                    <button
                      type="button"
                      className="danger"
                      data-testid="mcp-remove"
                      aria-label={t('mcp.removeLabel', { name: c.name })}
                      disabled={busy}
                      onClick={() => void remove(c.name)}
                    >
                      {t('mcp.remove')}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {editing && (
        <McpServerForm
          key={editing.original === null ? 'new' : `edit:${editing.original}`}
          editing={editing}
          busy={busy}
          onChange={change}
          onSubmit={(e) => void submit(e)}
          onCancel={() => {
            setEditing(null);
            setFailure(null);
          }}
        />
      )}
      {saved && (
        <p className="saved" data-testid="mcp-saved" role="status">
          {t('mcp.saved')}
        </p>
      )}
      {failure && (
        <p className="turn-error" data-testid="mcp-error" role="alert">
          {t('mcp.failed', { message: failure })}
        </p>
      )}
    </section>
  );
}

export function RecentApprovals({ transport }: { transport: Pick<Transport, 'approvals'> }) {
  const t = useT();
  const load = useCallback(() => transport.approvals(20), [transport]);
  const { value: entries, error } = useLoaded(load);
  return (
    <section className="panel audit-panel" aria-labelledby="audit-heading">
      <h2 id="audit-heading">{t('audit.heading')}</h2>
      <LoadState loaded={entries !== undefined} error={error} />
      {entries && entries.length === 0 && <p className="muted">{t('audit.empty')}</p>}
      {entries && entries.length > 0 && (
        <table className="settings-table">
          <thead>
            <tr>
              <th>{t('audit.time')}</th>
              <th>{t('audit.tool')}</th>
              <th>{t('audit.decision')}</th>
              <th>{t('audit.decidedBy')}</th>
              <th>{t('audit.reason')}</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((a: AuditEntry) => (
              <tr key={a.id}>
                <td><time dateTime={a.created_at}>{new Date(a.created_at).toLocaleString()}</time></td>
                <td><code>{a.tool}</code></td>
                <td><span className={`decision decision-${a.decision}`}>{a.decision}</span></td>
                <td>{a.decided_by}</td>
                <td>{a.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

interface Props {
  transport: SettingsTransport;
  session: string | null;
}

export function SettingsView({ transport, session }: Props) {
  return (
    <div className="settings">
      <ProviderPanel transport={transport} />
      {transport.desktop && <DesktopPanel desktop={transport.desktop} />}
      <BootstrapPanel transport={transport} />
      <RulesPanel transport={transport} session={session} />
      <McpPanel transport={transport} />
      <RecentApprovals transport={transport} />
    </div>
  );
}
