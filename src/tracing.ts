import { SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';

export interface Tracing {
  /** Undefined when tracing is off: callers then skip span work entirely. */
  tracer?: Tracer;
  shutdown(): Promise<void>;
}

const off: Tracing = { shutdown: async () => undefined };
const exitExportMs = 2_000;

/**
 * Sends spans to an OTLP/HTTP endpoint when one is configured. Off (the default) loads no SDK and registers nothing,
 * so the OpenTelemetry API stays a no-op.
 */
export async function startTracing(endpoint: string | undefined, serviceName: string): Promise<Tracing> {
  if (!endpoint) return off;
  const [{ TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: endpoint }) })],
  });
  trace.setGlobalTracerProvider(provider);
  // A collector that is down at exit costs the last batch, never a clean shutdown, and holds the exit 2 s at most
  // (the exporter alone would retry for 10 s); a collector that is up takes milliseconds.
  const giveUp = () => new Promise<void>((resolve) => setTimeout(resolve, exitExportMs).unref());
  return { tracer: provider.getTracer('docent'), shutdown: () => Promise.race([provider.shutdown().catch(() => undefined), giveUp()]) };
}

/** Runs `work` in a span named `name` when tracing is on; otherwise just runs it. */
export async function traced<T>(tracer: Tracer | undefined, name: string, attributes: Record<string, string>, work: () => Promise<T>): Promise<T> {
  if (!tracer) return work();
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work();
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  });
}
