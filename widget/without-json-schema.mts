import { pathToFileURL } from 'node:url';
import type { Plugin } from 'vite';

/** zod's JSON Schema generation: zod wires it into every schema it builds, so tree-shaking cannot drop it. */
const zodModules = /\/zod\/v4\/core\/(?:json-schema-processors|to-json-schema)\.js$/;
/** The exports zod calls while it builds a schema; they return the (never called) conversion method. */
const methodFactory = /^create\w*JSONSchemaMethod$/;
const stubPrefix = '\0docent-widget-no-json-schema:';

/** The AI SDK's converter for Zod 3 schemas, inside provider-utils' single file; `ai` builds its schemas with Zod 4. */
const providerUtils = /\/@ai-sdk\/provider-utils\/dist\/index\.js$/;
const zod3Converter = 'const zod3ToJsonSchema = (schema, options) => {';

const leftOut = 'JSON Schema conversion is left out of the docent widget (widget/without-json-schema.mts)';

/**
 * Leaves out the code that turns schemas into JSON Schema, about a sixth of the widget. The AI SDK's client validates
 * each stream chunk with zod, and keeps a JSON Schema of each schema for tools and structured output, built lazily
 * on first read; the widget never reads one. Validation code is untouched. zod's two modules become stubs with the
 * same exports that throw if called; the AI SDK's Zod 3 converter throws on entry, so the bundler drops its body.
 */
export function withoutJsonSchema(): Plugin {
  return {
    name: 'docent-widget-without-json-schema',
    enforce: 'pre',
    async resolveId(source, importer) {
      if (!importer?.includes('/node_modules/zod/') || !/json-schema/.test(source)) return null;
      const resolved = await this.resolve(source, importer, { skipSelf: true });
      return resolved && zodModules.test(resolved.id) ? stubPrefix + resolved.id : null;
    },
    async load(id) {
      if (!id.startsWith(stubPrefix)) return null;
      const names = Object.keys(await import(pathToFileURL(id.slice(stubPrefix.length)).href));
      const exports = names.map((name) => `export const ${name} = ${methodFactory.test(name) ? '() => leftOut' : 'leftOut'};`);
      return [`const leftOut = () => { throw new Error(${JSON.stringify(leftOut)}); };`, ...exports].join('\n');
    },
    transform(code, id) {
      if (!providerUtils.test(id)) return null;
      if (!code.includes(zod3Converter)) this.error(`${zod3Converter} is no longer in ${id}: update widget/without-json-schema.mts`);
      return code.replace(zod3Converter, `${zod3Converter} throw new Error(${JSON.stringify(leftOut)});`);
    },
  };
}
