// Draws the traffic page's charts with uPlot from the page's JSON data block. Without this
// script the tables beside the charts carry the same numbers.
(function () {
  // Every time on the dashboard is UTC and 24-hour, whatever the browser's time zone or locale.
  function pad(n) {
    return (n < 10 ? '0' : '') + n;
  }
  function day(d) {
    return d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate());
  }
  function clock(d) {
    return pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes());
  }
  /** A point's time in the legend: `2026-11-29 14:05 UTC`. */
  function pointLabel(seconds) {
    if (seconds === null || seconds === undefined) return '—';
    var d = new Date(seconds * 1000);
    return day(d) + ' ' + clock(d) + ' UTC';
  }
  /** The time axis' ticks: hours and minutes within a day, the date where a day begins or the span is days. */
  function axisLabels(splits, spanSeconds) {
    return splits.map(function (seconds) {
      var d = new Date(seconds * 1000);
      var midnight = d.getUTCHours() === 0 && d.getUTCMinutes() === 0;
      if (spanSeconds > 2 * 86400) return day(d).slice(5);
      return midnight ? day(d).slice(5) + ' ' + clock(d) : clock(d);
    });
  }
  /** Counts have whole-number ticks: no "0.5 requests" when a period has few. */
  var COUNT_INCREMENTS = [
    1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2500, 5e3, 1e4, 2e4, 25e3, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7,
  ];
  function countLabels(splits) {
    return splits.map(function (n) {
      return Number.isInteger(n) ? n.toLocaleString('en-US') : '';
    });
  }
  /** Whether a value stands alone between gaps: a line is not drawn to it, so its point must be. */
  function hasLoneValue(values) {
    for (var i = 0; i < values.length; i++) {
      if (values[i] === null) continue;
      if ((i === 0 || values[i - 1] === null) && (i === values.length - 1 || values[i + 1] === null)) return true;
    }
    return false;
  }
  // For the unit test, which runs this file without a page.
  window.dashboardCharts = { pointLabel: pointLabel, axisLabels: axisLabels, countLabels: countLabels, hasLoneValue: hasLoneValue };

  var block = document.getElementById('chart-data');
  if (!block || typeof uPlot === 'undefined') return;
  var data = JSON.parse(block.textContent);
  var COLORS = ['#1f6feb', '#8250df', '#d1242f', '#9a6700', '#1a7f37', '#bc4c00', '#0969da', '#6e7781'];
  var drawn = [];

  function size(el) {
    return { width: Math.max(240, el.clientWidth), height: 200 };
  }

  data.charts.forEach(function (chart) {
    var el = document.querySelector('[data-chart="' + chart.id + '"]');
    if (!el) return;
    var counts = chart.unit === 'requests';
    // Shown first, so the chart is sized to the width the page gives it.
    el.classList.add('drawn');
    var opts = Object.assign(size(el), {
      legend: { show: true },
      // Ticks fall on UTC hours and days.
      tzDate: function (seconds) {
        return uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');
      },
      scales: {
        x: { time: true },
        y: counts
          ? {
              range: function (_u, _min, max) {
                return [0, Math.max(1, Math.ceil(max * 1.1))];
              },
            }
          : {},
      },
      axes: [
        {
          // Room for a tick like "11-29 00:00" beside the next.
          space: 80,
          values: function (u, splits) {
            return axisLabels(splits, u.scales.x.max - u.scales.x.min);
          },
        },
        counts
          ? {
              label: chart.unit,
              size: 60,
              incrs: COUNT_INCREMENTS,
              values: function (_u, splits) {
                return countLabels(splits);
              },
            }
          : { label: chart.unit, size: 60 },
      ],
      series: [
        {
          value: function (_u, seconds) {
            return pointLabel(seconds);
          },
        },
      ].concat(
        chart.series.map(function (s, i) {
          var color = s.color || COLORS[i % COLORS.length];
          // With few requests a series is values between gaps: its points are drawn, or nothing would be.
          var points = { show: hasLoneValue(s.values), size: 6, fill: color };
          return { label: s.label, stroke: color, width: 2, spanGaps: false, points: points };
        }),
      ),
    });
    var values = [data.x].concat(
      chart.series.map(function (s) {
        return s.values;
      }),
    );
    drawn.push({ el: el, plot: new uPlot(opts, values, el) });
  });

  var pending;
  window.addEventListener('resize', function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      drawn.forEach(function (d) {
        d.plot.setSize(size(d.el));
      });
    }, 150);
  });
})();
