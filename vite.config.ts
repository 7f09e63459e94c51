// Vite build of the web UI: sources in `ui/`, output in `ui/dist` (served by `echod serve --ui`
// and loaded by the desktop app): the main page `index.html` and the desktop's quick-ask
// window `quick.html`.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  root: 'ui',
  base: './',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    rollupOptions: {
      // Relative to the working directory (the repository root, as `root` is).
      input: {
        main: 'ui/index.html',
        quick: 'ui/quick.html',
      },
    },
  },
});
