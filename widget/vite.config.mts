import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';
import { withoutJsonSchema } from './without-json-schema.mjs';

const outDir = fileURLToPath(new URL('../dist/widget', import.meta.url));

/** Writes file.br and file.gz beside each output, at the best levels, for the gateway to send as they are. */
function precompress(): Plugin {
  return {
    name: 'docent-precompress',
    async writeBundle(_options, bundle) {
      for (const name of Object.keys(bundle)) {
        const file = path.join(outDir, name);
        const data = await readFile(file);
        await writeFile(`${file}.br`, await promisify(brotliCompress)(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        await writeFile(`${file}.gz`, await promisify(gzip)(data, { level: 9 }));
      }
    },
  };
}

// Two builds into dist/widget, which the gateway serves (src/widget.ts): `vite build` makes widget.js, a classic
// script that a docs site adds with one tag; `--mode module` makes docent-assistant.mjs, the element alone as an ES
// module for sites that bundle. Both are self-contained: no chunks, no CSS files, nothing else to fetch.
export default defineConfig(({ mode }) => {
  const module = mode === 'module';
  return {
    root: fileURLToPath(new URL('.', import.meta.url)),
    publicDir: false,
    plugins: [withoutJsonSchema(), precompress()],
    build: {
      outDir,
      emptyOutDir: !module,
      target: 'es2022',
      // Library builds leave ES output unminified; this file goes to browsers as it is.
      minify: true,
      rolldownOptions: { output: { minify: true } },
      lib: module
        ? { entry: fileURLToPath(new URL('src/module.ts', import.meta.url)), formats: ['es'], fileName: () => 'docent-assistant.mjs' }
        : { entry: fileURLToPath(new URL('src/boot.ts', import.meta.url)), formats: ['iife'], name: 'docentWidget', fileName: () => 'widget.js' },
    },
  };
});
