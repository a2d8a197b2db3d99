// Whether jobs can show their status in the Temporal UI: the namespace needs the DocentJobStatus search attribute.
// A start naming an unregistered attribute is refused, so the gateway checks first (and registers it where it may).
import { type Client as TemporalClient, isGrpcServiceError } from '@temporalio/client';
import type { Logger } from '../log';
import { JOB_STATUS_SEARCH_ATTRIBUTE } from '../../workflows/task-queues';

const keywordType = 2; // INDEXED_VALUE_TYPE_KEYWORD
const grpcAlreadyExists = 6;
// A refused registration is asked again after this long: an operator may register it meanwhile (docs/operations.md).
const recheckMs = 5 * 60_000;

export class JobStatusAttribute {
  private present = false;
  private recheckAt = 0;
  private checking: Promise<boolean> | undefined;

  constructor(
    private readonly temporal: TemporalClient,
    private readonly namespace: string,
    private readonly log: Logger,
  ) {}

  /** True once the attribute is registered; false (for a while) when it is missing and may not be added. */
  async available(): Promise<boolean> {
    if (this.present) return true;
    if (Date.now() < this.recheckAt) return false;
    this.checking ??= this.check().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async check(): Promise<boolean> {
    const { operatorService } = this.temporal.connection;
    const { namespace } = this;
    try {
      const listed = await operatorService.listSearchAttributes({ namespace });
      if (listed.customAttributes?.[JOB_STATUS_SEARCH_ATTRIBUTE] === undefined)
        await operatorService.addSearchAttributes({ namespace, searchAttributes: { [JOB_STATUS_SEARCH_ATTRIBUTE]: keywordType } });
      this.present = true;
    } catch (err) {
      // Another gateway or worker added it first.
      if (isGrpcServiceError(err) && err.code === grpcAlreadyExists) this.present = true;
      else {
        this.recheckAt = Date.now() + recheckMs;
        this.log.warn(
          { err: { message: err instanceof Error ? err.message : String(err) } },
          `the Temporal namespace lacks the ${JOB_STATUS_SEARCH_ATTRIBUTE} search attribute and docent may not add it: jobs run without it (docs/operations.md)`,
        );
      }
    }
    return this.present;
  }
}
