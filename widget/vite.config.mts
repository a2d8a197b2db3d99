import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Two builds into dist/widget, which the gateway serves (src/widget.ts): `vite build` makes widget.js, a classic
// script that a docs site adds with one tag; `--mode module` makes docent-assistant.mjs, the element alone as an ES
// module for sites that bundle. Both are self-contained: no chunks, no CSS files, nothing else to fetch.
export default defineConfig(({ mode }) => {
  const module = mode === 'module';
  return {
    root: fileURLToPath(new URL('.', import.meta.url)),
    publicDir: false,
    build: {
      outDir: fileURLToPath(new URL('../dist/widget', import.meta.url)),
      emptyOutDir: !module,
      target: 'es2022',
      reportCompressedSize: true,
      lib: module
        ? { entry: fileURLToPath(new URL('src/module.ts', import.meta.url)), formats: ['es'], fileName: () => 'docent-assistant.mjs' }
        : { entry: fileURLToPath(new URL('src/boot.ts', import.meta.url)), formats: ['iife'], name: 'docentWidget', fileName: () => 'widget.js' },
    },
  };
});
