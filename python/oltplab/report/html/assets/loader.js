// Renders every chart (SVG, so that print and zoom stay sharp), makes tables sortable, and
// sets window.__report when done: the tests wait for it.
(function(){
  // Columns (page.py's columnar) back to rows: strings come as levels and codes.
  function rows(columns){
    var keys = Object.keys(columns), n = 0;
    keys.forEach(function(k){ var c = columns[k]; n = Math.max(n, Array.isArray(c) ? c.length : c.codes.length); });
    var out = new Array(n);
    for (var i = 0; i < n; i++) {
      var row = {};
      keys.forEach(function(k){ var c = columns[k]; row[k] = Array.isArray(c) ? c[i] : c.levels[c.codes[i]]; });
      out[i] = row;
    }
    return out;
  }
  var views = {}, charts = document.querySelectorAll('div.chart'), failures = [];
  var jobs = Array.prototype.map.call(charts, function(el){
    var doc = JSON.parse(document.getElementById('spec-' + el.dataset.spec).textContent);
    var spec = doc.spec;
    spec.datasets = {};
    Object.keys(doc.data).forEach(function(name){ spec.datasets[name] = rows(doc.data[name]); });
    return vegaEmbed(el, spec, {renderer: 'svg', actions: false})
      .then(function(r){ views[el.dataset.name] = r.view; })
      .catch(function(e){ failures.push(el.dataset.name + ': ' + e); console.error(e); });
  });
  Promise.all(jobs).then(function(){ window.__report = {views: views, failures: failures}; });
  function value(td){ var v = td.getAttribute('data-value'); return v === null ? td.textContent : v; }
  document.querySelectorAll('table.sortable').forEach(function(table){
    table.querySelectorAll('th').forEach(function(th, col){
      th.addEventListener('click', function(){
        var asc = !th.classList.contains('asc');
        table.querySelectorAll('th').forEach(function(h){ h.classList.remove('asc', 'desc'); });
        th.classList.add(asc ? 'asc' : 'desc');
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function(a, b){
          var x = value(a.cells[col]), y = value(b.cells[col]), nx = parseFloat(x), ny = parseFloat(y);
          var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
          return asc ? c : -c;
        });
        rows.forEach(function(r){ body.appendChild(r); });
      });
    });
  });
})();
