// The tiny i18n module: locale tables, `{name}` interpolation, and a React context so
// components ask for strings by key and never hard-code UI text.

import { createContext, useContext } from 'react';
import { en, enOne, type MessageKey } from './locales/en';
import { zhCN } from './locales/zh-CN';

/** The supported locales. */
export const LOCALES = { en: 'English', 'zh-CN': '简体中文' } as const;

/** Where the chosen locale is kept (localStorage). */
export const LOCALE_KEY = 'echo-desk-locale';

/** A supported locale. */
export type Locale = keyof typeof LOCALES;

const TABLES: Record<Locale, Record<MessageKey, string>> = { en, 'zh-CN': zhCN };

/** Each locale's strings for a count of one, where its plural rules have that form. */
const ONE: Record<Locale, Partial<Record<MessageKey, string>>> = { en: enOne, 'zh-CN': {} };

/** Looks a string up and fills in `{name}` placeholders. */
export type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

/** The translator for a locale (English for a missing entry). A numeric `{count}` picks the
 * locale's form for it (`Intl.PluralRules`): "1 memory", "2 memories". */
export function translator(locale: Locale): Translate {
  const table = TABLES[locale];
  const plural = new Intl.PluralRules(locale);
  return (key, vars) => {
    const count = vars?.count;
    const one = typeof count === 'number' && plural.select(count) === 'one' ? ONE[locale][key] : undefined;
    const template = one ?? table[key] ?? en[key];
    if (!vars) return template;
    return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
      name in vars ? String(vars[name]) : whole,
    );
  };
}

/** The best locale for a list of browser languages. */
export function pickLocale(languages: readonly string[]): Locale {
  for (const lang of languages) {
    if (/^zh\b/i.test(lang)) return 'zh-CN';
    if (/^en\b/i.test(lang)) return 'en';
  }
  return 'en';
}

/** The current translator; `App` provides it. */
export const I18nContext = createContext<Translate>(translator('en'));

/** The current translator, in a component. */
export function useT(): Translate {
  return useContext(I18nContext);
}

export type { MessageKey };
