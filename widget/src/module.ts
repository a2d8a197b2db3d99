// The ES module build (docent-assistant.mjs): sites that bundle import the element and place it themselves.
export { DocentAssistant, defineDocentAssistant } from './element';
export type { WidgetSettings } from './settings';
