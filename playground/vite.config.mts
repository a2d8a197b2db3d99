import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Built into dist/playground, which the gateway serves at /playground/ (src/playground.ts).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/playground/',
  build: {
    outDir: fileURLToPath(new URL('../dist/playground', import.meta.url)),
    emptyOutDir: true,
    rolldownOptions: {
      // swr (inside @ai-sdk/react) marks its modules 'use client', which means nothing outside React Server Components.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
});
