// The MCP server add/edit form. Environment and header values may be secrets: their boxes
// are masked (like a password field, keys included) until "Show values" is ticked.

import { type FormEvent, useState } from 'react';
import { useT } from '../../i18n';
import type { McpForm, McpFormTransport } from '../../mcpForm';
import type { McpEditing } from '../../settings/mcpStore';

interface McpFormProps {
  editing: McpEditing;
  busy: boolean;
  onChange: (change: Partial<McpForm>) => void;
  onSubmit: (e: FormEvent) => void;
  onCancel: () => void;
}

export function McpServerForm({ editing, busy, onChange, onSubmit, onCancel }: McpFormProps) {
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
