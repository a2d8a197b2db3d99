import { z } from 'zod';

/** USD per million input and output tokens, by model id (DOCENT_MODEL_PRICES). */
export type PriceTable = Record<string, { input: number; output: number }>;

export const priceTableSchema = z.record(z.string(), z.strictObject({ input: z.number().min(0), output: z.number().min(0) }));

/** What the tokens cost with the table's price for the model; undefined when the table has no price for it. */
export function costUsd(prices: PriceTable, model: string, usage: { inputTokens: number; outputTokens: number }): number | undefined {
  const price = prices[model];
  if (!price) return undefined;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
}
