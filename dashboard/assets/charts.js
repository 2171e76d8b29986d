// Draws the traffic page's charts with uPlot from the page's JSON data block. Without this
// script the tables beside the charts carry the same numbers.
(function () {
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
    // Shown first, so the chart is sized to the width the page gives it.
    el.classList.add('drawn');
    var opts = Object.assign(size(el), {
      legend: { show: true },
      scales: { x: { time: true } },
      axes: [{}, { label: chart.unit, size: 60 }],
      series: [{}].concat(
        chart.series.map(function (s, i) {
          return { label: s.label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: false };
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
