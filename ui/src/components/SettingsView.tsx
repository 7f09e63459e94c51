// The settings view: the model provider, web search, the desktop's quick-ask shortcut (in the desktop app
// only), the standing instructions, projects, approval rules, the MCP servers, trace capture and
// retention, the recent gate decisions, and last, set apart, "Delete all my data". Each panel
// (components/settings/) reads one store of its domain (settings/), which alone talks to the
// transport.

import type { Transport } from '../transport';
import { AuditPanel } from './settings/AuditPanel';
import { BootstrapPanel } from './settings/BootstrapPanel';
import { DeleteDataPanel } from './settings/DeleteDataPanel';
import { DesktopPanel } from './settings/DesktopPanel';
import { DevicesPanel } from './settings/DevicesPanel';
import { McpPanel } from './settings/McpPanel';
import { ProjectsPanel } from './settings/ProjectsPanel';
import { ProviderPanel } from './settings/ProviderPanel';
import { RulesPanel } from './settings/RulesPanel';
import { SearchPanel } from './settings/SearchPanel';
import { TracesPanel } from './settings/TracesPanel';

/** The engine's operations, and the desktop bridge in the desktop app. */
type SettingsTransport = Pick<Transport, 'call' | 'desktop'>;

interface Props {
  transport: SettingsTransport;
  /** The selected chat session, offered for session rules. */
  session: string | null;
  /** Called once all the person's data is deleted, for the page to drop what it still shows. */
  onDataDeleted?: () => void;
  /** Called after a project is added, changed or removed (the sidebar and chat show them). */
  onProjectsChanged?: () => void;
}

export function SettingsView({ transport, session, onDataDeleted, onProjectsChanged }: Props) {
  return (
    <div className="settings">
      <ProviderPanel transport={transport} />
      <SearchPanel transport={transport} />
      {transport.desktop && <DesktopPanel desktop={transport.desktop} />}
      <BootstrapPanel transport={transport} />
      <ProjectsPanel transport={transport} onChanged={onProjectsChanged} />
      <RulesPanel transport={transport} session={session} />
      <McpPanel transport={transport} />
      <TracesPanel transport={transport} />
      <AuditPanel transport={transport} />
      <DevicesPanel transport={transport} />
      <DeleteDataPanel transport={transport} onDeleted={onDataDeleted} />
    </div>
  );
}
