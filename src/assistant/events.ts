// The answer as docent produces it, before any wire format: the encoders turn these into v1/v2 streams and RPC events.

/** A cited documentation passage. */
export interface AnswerSource {
  /** The citation number in the answer text ("[1]"), as a string. */
  id: string;
  url: string;
  /** Page title and heading trail, e.g. `npm-ci › Configuration`. */
  title: string;
  path: string;
}

export interface AnswerUsage {
  promptTokens: number;
  completionTokens: number;
}

export type AnswerEvent =
  | { type: 'source'; source: AnswerSource }
  | { type: 'text'; delta: string }
  | { type: 'finish'; finishReason: 'stop' | 'length' | 'content-filter' | 'error' | 'other'; usage: AnswerUsage };
