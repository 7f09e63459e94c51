// Unit tests of the web UI (`ui/src/**/*.test.ts`); jsdom where a test asks for it.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['ui/src/**/*.test.{ts,tsx}'],
    environment: 'node',
  },
});
