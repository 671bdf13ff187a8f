// patchbench browse: the overview's filters. On the server, a change of
// filter reloads the overview with the filters as query parameters (the
// server filters; without this script, the Apply button does the same).
// In the single file (report --format html), there is no server: the
// script reads the filters from the file's query and shows only what they
// keep, as the server would.
(function () {
  'use strict';
  var form = document.getElementById('filters');
  if (!form) {
    return;
  }
  var isStatic = document.body.getAttribute('data-mode') === 'static';
  var names = ['domain', 'config', 'actor', 'outcome', 'round', 'q'];

  function current() {
    var v = {};
    names.forEach(function (n) {
      var el = form.elements[n];
      v[n] = el ? String(el.value).trim() : '';
    });
    return v;
  }

  function query(v) {
    var p = new URLSearchParams();
    names.forEach(function (n) {
      if (v[n]) {
        p.set(n, v[n]);
      }
    });
    var s = p.toString();
    return s ? '?' + s : '';
  }

  if (!isStatic) {
    var go = function () {
      window.location.assign(form.getAttribute('action').split('?')[0] + query(current()));
    };
    form.addEventListener('submit', function (e) {
      e.preventDefault();
      go();
    });
    Array.prototype.forEach.call(form.querySelectorAll('select'), function (s) {
      s.addEventListener('change', go);
    });
    return;
  }

  // The single file: filter here.
  var outcomes = ['error', 'pending', 'leaked', 'illegal', 'failed', 'passed'];
  var symbols = { error: 'E', pending: '\u2026', leaked: 'L', illegal: '!', failed: '\u2717', passed: '\u2713' };
  var words = { illegal: 'illegal commit' };
  var labels = {};
  (form.getAttribute('data-labels') || '').split(';').forEach(function (pair) {
    var kv = pair.split('=');
    if (kv.length === 2) {
      labels[kv[0]] = kv[1];
    }
  });

  function search(q) {
    var parts = q.toLowerCase().split('/');
    if (parts.length > 1 && labels[parts[1]]) {
      parts[1] = labels[parts[1]];
    }
    return parts.join('/');
  }

  function hasFlag(flags, o) {
    return (flags & (1 << outcomes.indexOf(o))) !== 0;
  }

  function primary(flags) {
    for (var i = 0; i < outcomes.length; i++) {
      if (flags & (1 << i)) {
        return outcomes[i];
      }
    }
    return 'failed';
  }

  function runMatches(tr, v, q) {
    var flags = tr.getAttribute('data-outcomes').split(' ');
    return (!v.domain || tr.getAttribute('data-domain') === v.domain) &&
      (!v.config || tr.getAttribute('data-config') === v.config) &&
      (!v.actor || tr.getAttribute('data-actor') === v.actor) &&
      (!v.round || tr.getAttribute('data-round') === v.round) &&
      (!v.outcome || flags.indexOf(v.outcome) >= 0) &&
      (!q || tr.getAttribute('data-id').toLowerCase().indexOf(q) >= 0);
  }

  // A grid cell shows the most severe outcome of the runs the round and
  // the search keep, as the server's cells do.
  function drawCell(td, v, q) {
    var data = td.getAttribute('data-runs');
    if (!data) {
      return false;
    }
    var counts = {}, n = 0, union = 0, only = '';
    data.split(',').forEach(function (item) {
      var f = item.split('|');
      if ((v.round && f[1] !== v.round) || (q && f[0].toLowerCase().indexOf(q) < 0)) {
        return;
      }
      var flags = parseInt(f[2], 10);
      var o = primary(flags);
      counts[o] = (counts[o] || 0) + 1;
      union |= flags;
      n++;
      only = f[0];
    });
    td.className = 'cell';
    var a = td.querySelector('a');
    if (n === 0) {
      td.classList.add('empty');
      if (a) {
        a.hidden = true;
      }
      return false;
    }
    var shown = outcomes.filter(function (o) { return counts[o]; })[0];
    td.classList.add('o-' + shown);
    var dim = !!v.outcome && !hasFlag(union, v.outcome);
    if (dim) {
      td.classList.add('dim');
    }
    if (a) {
      a.hidden = false;
      a.querySelector('.sym').textContent = symbols[shown];
      a.querySelector('.sr').textContent = words[shown] || shown;
      var cnt = a.querySelector('.n');
      if (cnt) {
        cnt.textContent = counts[shown] + '/' + n;
      }
      if (n === 1) {
        a.setAttribute('href', '#run-' + only);
      }
      var also = a.querySelector('.also');
      if (also) {
        also.textContent = ['leaked', 'illegal'].filter(function (o) {
          return o !== shown && hasFlag(union, o);
        }).map(function (o) { return ' ' + symbols[o]; }).join('');
      }
    }
    return !dim;
  }

  function apply() {
    var v = current();
    var q = search(v.q);
    var narrowing = v.outcome || q || v.round;
    Array.prototype.forEach.call(document.querySelectorAll('table.main tbody tr'), function (tr) {
      tr.hidden = (v.config && tr.getAttribute('data-config') !== v.config) || (v.actor && tr.getAttribute('data-actor') !== v.actor);
    });
    Array.prototype.forEach.call(document.querySelectorAll('.actor-grid'), function (g) {
      g.hidden = !!v.actor && g.getAttribute('data-actor') !== v.actor;
      Array.prototype.forEach.call(g.querySelectorAll('[data-config]'), function (el) {
        el.hidden = !!v.config && el.getAttribute('data-config') !== v.config;
      });
      var shown = 0;
      Array.prototype.forEach.call(g.querySelectorAll('tbody tr'), function (tr) {
        var any = false;
        Array.prototype.forEach.call(tr.querySelectorAll('td.cell'), function (td) {
          if (drawCell(td, v, q) && !td.hidden) {
            any = true;
          }
        });
        tr.hidden = (v.domain && tr.getAttribute('data-domain') !== v.domain) || (narrowing && !any);
        if (!tr.hidden) {
          shown++;
        }
      });
      var none = g.querySelector('.none-match');
      if (none) {
        none.hidden = shown > 0;
      }
    });
    var matched = 0;
    Array.prototype.forEach.call(document.querySelectorAll('table.runs tbody tr'), function (tr) {
      var ok = runMatches(tr, v, q);
      tr.hidden = !ok;
      if (ok) {
        matched++;
      }
    });
    var count = document.getElementById('run-count');
    if (count) {
      count.textContent = matched + (matched === 1 ? ' run matches' : ' runs match') + ' the filters.';
    }
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, '', window.location.pathname + query(v) + window.location.hash);
    }
  }

  var params = new URLSearchParams(window.location.search);
  names.forEach(function (n) {
    var el = form.elements[n];
    if (el && params.has(n)) {
      el.value = params.get(n);
    }
  });
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    apply();
  });
  form.addEventListener('change', apply);
  form.addEventListener('input', apply);
  Array.prototype.forEach.call(form.querySelectorAll('a.clear'), function (a) {
    a.addEventListener('click', function (e) {
      e.preventDefault();
      form.reset();
      names.forEach(function (n) {
        if (form.elements[n]) {
          form.elements[n].value = '';
        }
      });
      apply();
    });
  });
  apply();
}());
