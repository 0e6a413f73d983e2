import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/kernel/config';
import { operationOf } from '../../src/kernel/tracing/postgres';
import { samplerOf } from '../../src/kernel/tracing/setup';

describe('tracing configuration (OTEL_* variables)', () => {
  it('is off unless an exporter is configured', () => {
    expect(loadConfig({}).tracing).toEqual({
      exporters: [],
      otlpUrl: 'http://localhost:4318/v1/traces',
      otlpProtocol: 'http/protobuf',
      serviceName: 'commerce-platform-api',
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
    });
    expect(
      loadConfig({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).tracing.exporters,
    ).toEqual([]);
    expect(loadConfig({ OTEL_SDK_DISABLED: 'TRUE', OTEL_TRACES_EXPORTER: 'otlp' }).tracing.exporters).toEqual([]);
  });

  it('exports over OTLP once an endpoint is given, to /v1/traces of the general one or the traces one as given', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toMatchObject({
      exporters: ['otlp'],
      otlpUrl: 'http://collector:4318/v1/traces',
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/otlp/traces',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'shop-api',
      }).tracing,
    ).toMatchObject({
      exporters: ['otlp'],
      otlpUrl: 'https://traces.example.com/otlp/traces',
      otlpProtocol: 'http/json',
      serviceName: 'shop-api',
    });
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp, console' }).tracing.exporters).toEqual(['otlp', 'console']);
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })
        .tracing.otlpProtocol,
    ).toBe('http/protobuf');
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER'],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG'],
  ])('refuses %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${name}`));
  });

  it('builds the sampler OTEL_TRACES_SAMPLER names, with OTEL_TRACES_SAMPLER_ARG as its ratio', () => {
    const sampler = (env: Record<string, string>) => samplerOf(loadConfig(env).tracing).toString();
    expect(sampler({})).toBe(
      'ParentBased{root=AlwaysOnSampler, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}',
    );
    expect(sampler({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toBe(
      'TraceIdRatioBased{0.25}',
    );
    expect(sampler({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' })).toMatch(
      /^ParentBased\{root=TraceIdRatioBased\{0.1\}/,
    );
    expect(sampler({ OTEL_TRACES_SAMPLER: 'always_off' })).toBe('AlwaysOffSampler');
  });
});

describe('the name of a database span', () => {
  it.each([
    ['SELECT 1', 'SELECT'],
    ['  insert into t values ($1)', 'INSERT'],
    ['\n    WITH due AS (SELECT 1) SELECT * FROM due', 'WITH'],
    ['-- why\n/* and how */ UPDATE t SET a = 1', 'UPDATE'],
    ['BEGIN', 'BEGIN'],
    ['', 'SQL'],
  ])('of %j is %s', (text, name) => {
    expect(operationOf(text)).toBe(name);
  });
});
