import type { Metric, Registry } from 'prom-client';

/** One exported sample, as prom-client's registry formats it. */
interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  labels: { method: string; route: string; status_code: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  buckets: Float64Array;
}

export interface RequestMetrics {
  observe(method: string, route: string, statusCode: number, seconds: number): void;
}

/**
 * The request counter and latency histogram, kept as plain numbers and handed to prom-client's registry
 * only when scraped. prom-client's own Counter and Histogram validate and hash the label object on
 * every observation, a measurable share of a fast request (docs/benchmarks.md); here a request costs a
 * map lookup and three additions. The exposition is the same series prom-client would write.
 */
export function registerRequestMetrics(registry: Registry): RequestMetrics {
  const series = new Map<string, Series>();

  function metric(name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[]): Metric {
    const m = {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => series.clear(),
    };
    return m as unknown as Metric;
  }

  registry.registerMetric(
    metric('workspace_http_requests_total', 'HTTP requests answered, by method, route pattern and status code.', 'counter', () =>
      [...series.values()].map((s) => ({ labels: { ...s.labels }, value: s.count })),
    ),
  );
  const durationName = 'workspace_http_request_duration_seconds';
  registry.registerMetric(
    metric(
      durationName,
      'Time from receiving a request to finishing its response, by method, route pattern and status code.',
      'histogram',
      () => {
        const values: Sample[] = [];
        for (const s of series.values()) {
          let cumulative = 0;
          for (let i = 0; i < BUCKETS.length; i++) {
            cumulative += s.buckets[i]!;
            values.push({ labels: { ...s.labels, le: BUCKETS[i]! }, value: cumulative, metricName: `${durationName}_bucket` });
          }
          values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${durationName}_bucket` });
          values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${durationName}_sum` });
          values.push({ labels: { ...s.labels }, value: s.count, metricName: `${durationName}_count` });
        }
        return values;
      },
    ),
  );

  return {
    observe(method, route, statusCode, seconds) {
      const key = `${method} ${statusCode} ${route}`;
      let s = series.get(key);
      if (!s) {
        s = { labels: { method, route, status_code: String(statusCode) }, count: 0, sum: 0, buckets: new Float64Array(BUCKETS.length + 1) };
        series.set(key, s);
      }
      s.count++;
      s.sum += seconds;
      let i = 0;
      while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
      s.buckets[i]!++;
    },
  };
}
