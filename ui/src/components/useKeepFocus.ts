// Keeps the keyboard in a part of the page when the control that had the focus leaves it (a
// Keep or Discard whose item goes once decided): `pressed` marks that such a control was
// used; once nothing is on its way any more (`busy` false) and the focus is nowhere in the
// part, the part itself (made focusable with tabIndex -1) takes it.

import { useLayoutEffect, useRef } from 'react';

/** `changed` is what changes when a decision settles; `busy` whether one is still on its way. */
export function useKeepFocus<T extends HTMLElement>(changed: unknown, busy: boolean) {
  const part = useRef<T>(null);
  const lost = useRef(false);
  useLayoutEffect(() => {
    if (!lost.current || busy) return;
    lost.current = false;
    const el = part.current;
    if (el && !el.contains(document.activeElement)) el.focus();
  }, [changed, busy]);
  const pressed = () => {
    lost.current = true;
  };
  return { part, pressed };
}
