// The approval rules: the list the engine keeps, the add form as typed, and the last refusal.
// Adding or removing a rule reads the whole list again, so it shows what the engine kept.

import type { AddRule, Rule, RuleDecision, RuleScope } from '../generated/engine';
import { SettingsStore, type SettingsTransport, describe } from './store';

/** The decisions and scopes, in the order the selects offer them (the variants of the wire types). */
export const DECISIONS: readonly RuleDecision[] = ['allow', 'ask', 'deny'];
export const SCOPES: readonly RuleScope[] = ['always', 'session'];

/** The add form as typed. */
export interface RuleDraft {
  tool: string;
  /** Empty for any. */
  pattern: string;
  decision: RuleDecision;
  scope: RuleScope;
  /** The session a session rule is for. */
  session: string;
}

/** The rule the form stands for: trimmed, the pattern only when given, the session only for session rules. */
export function newRule(d: RuleDraft): AddRule {
  return {
    tool: d.tool.trim(),
    ...(d.pattern.trim() ? { pattern: d.pattern.trim() } : {}),
    decision: d.decision,
    scope: d.scope,
    ...(d.scope === 'session' && d.session.trim() ? { session: d.session.trim() } : {}),
  };
}

export interface RulesState {
  rules: Rule[] | undefined;
  loadError: string | null;
  draft: RuleDraft;
  /** The engine's refusal of the last add or remove. */
  formError: string | null;
  busy: boolean;
}

export class RulesStore extends SettingsStore<RulesState> {
  private readonly transport: SettingsTransport;

  /** `session` (the selected chat session, if any) is offered for session rules. */
  constructor(transport: SettingsTransport, session: string | null) {
    super({
      rules: undefined,
      loadError: null,
      draft: { tool: '', pattern: '', decision: 'allow', scope: 'always', session: session ?? '' },
      formError: null,
      busy: false,
    });
    this.transport = transport;
  }

  async load(): Promise<void> {
    try {
      this.set({ rules: await this.transport.call('list_rules', {}), loadError: null });
    } catch (e) {
      this.set({ loadError: describe(e) });
    }
  }

  editDraft(change: Partial<RuleDraft>): void {
    this.set({ draft: { ...this.getState().draft, ...change } });
  }

  /** Sends the form; on success clears tool and pattern and reads the list again. */
  async add(): Promise<void> {
    this.set({ busy: true });
    try {
      await this.transport.call('add_rule', newRule(this.getState().draft));
      this.set({ formError: null, draft: { ...this.getState().draft, tool: '', pattern: '' } });
      await this.load();
    } catch (e) {
      this.set({ formError: describe(e) });
    } finally {
      this.set({ busy: false });
    }
  }

  /** Removes a rule, then reads the list again either way. */
  async remove(id: string): Promise<void> {
    try {
      await this.transport.call('remove_rule', { id });
      this.set({ formError: null });
    } catch (e) {
      this.set({ formError: describe(e) });
    }
    await this.load();
  }
}
