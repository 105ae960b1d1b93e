import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';
import { dollars } from './format';
import type { SpendRow } from './types';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

/**
 * Cost per group as bars. Chart.js draws on a canvas: labels (model names, user ids) are painted
 * as text, never parsed as markup.
 */
export function SpendChart({ rows, label, groupLabel }: { rows: SpendRow[]; label: string; groupLabel: (group: string | null) => string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const labels = rows.map((r) => groupLabel(r.group));
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels,
        // A bar is never wider than a few characters, so one group is not a slab across the chart.
        datasets: [{ label: 'cost', data: rows.map((r) => r.cost / 1e9), backgroundColor: '#3b6fd8', maxBarThickness: 48 }],
      },
      options: {
        animation: false,
        maintainAspectRatio: false,
        scales: {
          // Ninety days: labels are skipped rather than crowded or turned on their side.
          x: { ticks: { autoSkip: true, maxRotation: 0, autoSkipPadding: 12 } },
          y: { beginAtZero: true, ticks: { callback: (v) => dollars(Number(v) * 1e9) } },
        },
        plugins: { tooltip: { callbacks: { label: (item) => `${dollars(rows[item.dataIndex]!.cost)} · ${rows[item.dataIndex]!.requests} requests` } } },
      },
    });
    return () => chart.destroy();
  }, [rows, labels.join('\n')]);
  return (
    <figure class="chart" data-testid="spend-chart" aria-label={label}>
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={label} />
      </div>
      <figcaption>{label}</figcaption>
    </figure>
  );
}
