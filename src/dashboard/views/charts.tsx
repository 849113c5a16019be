import { formatCount } from './numbers.js';

/** One kind of value in a bar chart: drawn with its CSS class (dashboard.css), hatched if asked. */
export interface ChartSeries {
  label: string;
  className: string;
  /** Stripes over the colour, so this series differs from the others without colour. */
  hatched?: boolean;
}

/** One bar: a value per series, stacked in series order from the axis up. */
export interface ChartPoint {
  values: readonly number[];
  /** Text under the bar; most bars have none. */
  tick?: string | undefined;
}

const WIDTH = 720;
const HEIGHT = 220;
const PAD = { left: 56, right: 28, top: 12, bottom: 28 };
const PLOT_W = WIDTH - PAD.left - PAD.right;
const PLOT_H = HEIGHT - PAD.top - PAD.bottom;


/** A round axis top at or above `max` whose half is a whole number too (2, 4, 5, 10, 20, 40, 50, ...). */
export function axisTop(max: number): number {
  if (max <= 2) return 2;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 4, 5, 10]) {
    const top = m * magnitude;
    if (top >= max && (top / 2) % 1 === 0) return top;
  }
  return 10 * magnitude;
}

const hatchId = (id: string) => `${id}-hatch`;

function Swatch({ id, series }: { id: string; series: ChartSeries }) {
  return (
    <svg class="chart-swatch" width="14" height="14" viewBox="0 0 14 14" aria-hidden="true" focusable="false">
      <rect width="14" height="14" class={series.className} />
      {series.hatched ? <rect width="14" height="14" fill={`url(#${hatchId(id)})`} /> : null}
    </svg>
  );
}

/**
 * A server-rendered bar chart (stacked when there are several series). It is one image to assistive
 * technology, named by `label`, which should carry the summary; the page puts the data table behind it
 * next to it. Styled by classes and presentation attributes only: the dashboard's CSP allows no inline style.
 */
export function BarChart({ id, label, series, points }: { id: string; label: string; series: readonly ChartSeries[]; points: readonly ChartPoint[] }) {
  const totals = points.map((p) => p.values.reduce((a, b) => a + b, 0));
  const top = axisTop(Math.max(0, ...totals));
  const y = (v: number) => PAD.top + PLOT_H - (v / top) * PLOT_H;
  const slot = PLOT_W / Math.max(1, points.length);
  const barW = Math.max(1, slot * 0.72);
  const round = (n: number) => Math.round(n * 10) / 10;
  return (
    <div class="chart">
      <svg class="chart-svg" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label} focusable="false">
        <title>{label}</title>
        <defs>
          <pattern id={hatchId(id)} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <rect width="2.5" height="6" class="chart-hatch" />
          </pattern>
        </defs>
        {[0, top / 2, top].map((v) => (
          <g>
            <line class={v === 0 ? 'chart-baseline' : 'chart-grid'} x1={PAD.left} x2={WIDTH - PAD.right} y1={round(y(v))} y2={round(y(v))} />
            <text class="chart-axis" x={PAD.left - 6} y={round(y(v) + 4)} textAnchor="end">
              {formatCount(v)}
            </text>
          </g>
        ))}
        {points.map((point, i) => {
          const x = round(PAD.left + i * slot + (slot - barW) / 2);
          let below = 0;
          return (
            <g>
              {point.values.map((v, s) => {
                const kind = series[s];
                if (!kind || v <= 0) return null;
                const rect = { x, y: round(y(below + v)), width: round(barW), height: round((v / top) * PLOT_H) };
                below += v;
                return (
                  <>
                    <rect {...rect} class={kind.className} />
                    {kind.hatched ? <rect {...rect} fill={`url(#${hatchId(id)})`} /> : null}
                  </>
                );
              })}
              {point.tick ? (
                <text class="chart-axis" x={round(x + barW / 2)} y={HEIGHT - 8} textAnchor="middle">
                  {point.tick}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      {series.length > 1 ? (
        <ul class="chart-legend">
          {series.map((s) => (
            <li>
              <Swatch id={id} series={s} /> {s.label}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
