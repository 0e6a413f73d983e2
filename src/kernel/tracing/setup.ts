/**
 * OpenTelemetry traces, configured by the standard `OTEL_*` variables (parsed in config.ts). Off
 * unless an exporter is configured: then nothing is registered, and every traced path of the
 * service (see spans.ts) runs as it would without this file.
 *
 * The minimal SDK pieces rather than @opentelemetry/sdk-node: its releases for Node 20 pull in
 * metrics, logs and gRPC exporters, and its automatic instrumentations patch CommonJS modules,
 * which an ESM service importing `pg` and `node:http` does not reliably go through. The spans are
 * made at the few places that matter instead (http-server.ts, http-client.ts, postgres.ts,
 * graphql.ts, and the REST router).
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '../config';
import { packageInfo } from '../package-info';
import { setActiveTracer } from './spans';

export interface Tracing {
  /** Where spans go, for the start-up log line. */
  destination: string;
  /** Sends the spans still buffered and turns tracing off. */
  shutdown(): Promise<void>;
}

/** The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name. */
export function samplerOf(config: Pick<TracingConfig, 'sampler' | 'samplerRatio'>): Sampler {
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(config.samplerRatio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.samplerRatio) });
  }
}

function exporterOf(name: TracingConfig['exporters'][number], config: TracingConfig): SpanExporter {
  if (name === 'console') return new ConsoleSpanExporter();
  // Headers, timeout and compression come from OTEL_EXPORTER_OTLP_* as the exporter reads them.
  return config.otlpProtocol === 'http/json'
    ? new OTLPJsonTraceExporter({ url: config.otlpUrl })
    : new OTLPProtobufTraceExporter({ url: config.otlpUrl });
}

/**
 * Turns tracing on when `config` names an exporter (or `spanProcessors` are given, which then
 * replace the configured exporters: tests and benchmarks keep their spans in memory); returns
 * undefined and installs nothing otherwise. Call it before the database client and the
 * application are made: they decide once, when made, whether to trace.
 */
export function startTracing(
  config: TracingConfig,
  options: { spanProcessors?: SpanProcessor[] } = {},
): Tracing | undefined {
  if (config.exporters.length === 0 && options.spanProcessors === undefined) return undefined;
  const spanProcessors =
    options.spanProcessors ?? config.exporters.map((name) => new BatchSpanProcessor(exporterOf(name, config)));
  const resource = detectResources({ detectors: [envDetector] }).merge(
    resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName, [ATTR_SERVICE_VERSION]: packageInfo.version }),
  );
  const provider = new BasicTracerProvider({ resource, sampler: samplerOf(config), spanProcessors });
  // Registered globally too, so that any library using @opentelemetry/api joins the same traces.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setActiveTracer(provider.getTracer(packageInfo.name, packageInfo.version));
  return {
    destination: options.spanProcessors
      ? 'the given span processors'
      : config.exporters
          .map((name) => (name === 'otlp' ? `${config.otlpUrl} (${config.otlpProtocol})` : name))
          .join(', '),
    async shutdown() {
      setActiveTracer(undefined);
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
