// The settings view: the model provider, the desktop's quick-ask shortcut (in the desktop app
// only), the standing instructions, approval rules, the MCP servers, trace capture and
// retention, and the recent gate decisions. Each panel (components/settings/) reads one store
// of its domain (settings/), which alone talks to the transport.

import type { Transport } from '../transport';
import { AuditPanel } from './settings/AuditPanel';
import { BootstrapPanel } from './settings/BootstrapPanel';
import { DesktopPanel } from './settings/DesktopPanel';
import { McpPanel } from './settings/McpPanel';
import { ProviderPanel } from './settings/ProviderPanel';
import { RulesPanel } from './settings/RulesPanel';
import { TracesPanel } from './settings/TracesPanel';

/** The engine's operations, and the desktop bridge in the desktop app. */
type SettingsTransport = Pick<Transport, 'call' | 'desktop'>;

interface Props {
  transport: SettingsTransport;
  /** The selected chat session, offered for session rules. */
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
      <TracesPanel transport={transport} />
      <AuditPanel transport={transport} />
    </div>
  );
}
