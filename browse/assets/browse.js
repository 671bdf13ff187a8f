// The single file (report --format html): a run's page, at #run-ID, is
// built here from the data the file embeds (the script element pb-data,
// written by browse.B.WriteBundle), as the server's run template writes
// it: the same sections, classes and texts, every text through
// textContent. The data holds no hidden value unless the file was written
// with --reveal.
(function () {
  'use strict';
  if (document.body.getAttribute('data-mode') !== 'static') {
    return;
  }
  var root = document.getElementById('run-root');
  var dataEl = document.getElementById('pb-data');
  if (!root || !dataEl) {
    return;
  }
  var symbols = { error: 'E', pending: '\u2026', leaked: 'L', illegal: '!', failed: '\u2717', passed: '\u2713' };
  var D = null, byID = {}, byKey = {};

  var loading = null;

  // data decodes the embedded data once, when a run page is first asked
  // for (the overview needs none of it): base64, then gzip (the
  // browser's own DecompressionStream), then JSON. It returns a promise.
  function data() {
    if (loading) {
      return loading;
    }
    var bin = atob(dataEl.textContent.replace(/\s+/g, ''));
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) {
      bytes[i] = bin.charCodeAt(i);
    }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    loading = new Response(stream).text().then(function (text) {
      D = JSON.parse(text);
      D.runs.forEach(function (r) {
        var run = { id: r[0], kase: r[1], config: r[2], actor: r[3], round: r[4], dir: r[5], outcome: r[6], summary: r[7], body: r[8] };
        // A grown run's id ends its round with @ and its scale: its
        // pairs are the runs at the same scale.
        var last = run.id.split('/').pop(), at = last.indexOf('@');
        run.scale = at >= 0 ? last.slice(at + 1) : '';
        byID[run.id] = run;
        byKey[[run.kase, run.config, run.actor, run.round, run.scale].join('\u0000')] = run;
      });
      return D;
    });
    return loading;
  }

  function t(i) {
    return i ? D.t[i] : null;
  }

  // el makes an element: attrs set as attributes (class included),
  // kids appended (strings as text; null, undefined and false skipped;
  // arrays flattened).
  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (attrs[k] !== undefined && attrs[k] !== null && attrs[k] !== false) {
          e.setAttribute(k, attrs[k] === true ? '' : String(attrs[k]));
        }
      });
    }
    append(e, kids);
    return e;
  }

  function append(e, kids) {
    if (kids === undefined || kids === null || kids === false) {
      return;
    }
    if (!Array.isArray(kids)) {
      kids = [kids];
    }
    kids.forEach(function (k) {
      if (Array.isArray(k)) {
        append(e, k);
      } else if (k !== undefined && k !== null && k !== false) {
        e.appendChild(typeof k === 'string' || typeof k === 'number' ? document.createTextNode(String(k)) : k);
      }
    });
  }

  // segs renders a segment list: plain text, a leaked canary (marked,
  // its secret and detector named, its text withheld unless the file
  // holds it) or a hidden value.
  function segs(i) {
    var list = t(i);
    if (!list) {
      return [];
    }
    return list.map(function (g) {
      if (typeof g === 'string') {
        return document.createTextNode(g);
      }
      var has = Object.prototype.hasOwnProperty.call(g, 't');
      if (g.l !== undefined) {
        return el('mark', { 'class': 'leak', 'data-secret': g.l, 'data-detector': g.d, title: 'leaked canary ' + g.l + ', found by the ' + g.d + ' detector' },
          [has ? g.t : el('span', { 'class': 'withheld' }, 'hidden'), el('span', { 'class': 'tag' }, g.l + ' \u00b7 ' + g.d)]);
      }
      if (!has) {
        return el('span', { 'class': 'hidden', title: 'a hidden value (' + g.h + '), withheld until revealed' }, '\u2039hidden ' + g.h + '\u203a');
      }
      return el('span', { 'class': 'hidden revealed', title: 'a hidden value, revealed' }, g.t);
    });
  }

  function runHref(id) {
    return '#run-' + id.split('/').map(encodeURIComponent).join('/');
  }

  function sym(o) {
    return el('span', { 'class': 'sym', 'aria-hidden': 'true' }, symbols[o] || '?');
  }

  function word(o) {
    return o === 'illegal' ? 'illegal commit' : o;
  }

  function plural(n, one, many) {
    return n + ' ' + (n === 1 ? one : many);
  }

  function joined(list, f) {
    var out = [];
    (list || []).forEach(function (x, i) {
      if (i) {
        out.push('; ');
      }
      out.push(f(x));
    });
    return out;
  }

  function gates(list) {
    return el('table', { 'class': 'gates' }, [
      el('thead', null, el('tr', null, ['Gate', 'Result', 'Code', 'Pointer', 'Message'].map(function (h) { return el('th', { scope: 'col' }, h); }))),
      el('tbody', null, (list || []).map(function (g) {
        return el('tr', { 'class': g.passed ? 'ok' : 'fail' }, [el('td', null, g.gate), el('td', null, g.passed ? '\u2713 passed' : '\u2717 rejected'),
          el('td', null, el('code', null, g.code || '')), el('td', null, el('code', null, segs(g.pointer))), el('td', null, segs(g.message))]);
      }))]);
  }

  function table(cls, heads, rows) {
    return el('table', { 'class': cls }, [el('thead', null, el('tr', null, heads.map(function (h) { return el('th', { scope: 'col' }, h); }))), el('tbody', null, rows)]);
  }

  function step(run, s) {
    var out = el('section', { 'class': 'step', id: 'step-' + run.id + '-' + s.n });
    append(out, [el('h2', null, ['Step ' + s.n + ': ' + s.id + ' ', el('span', { 'class': 'result r-' + s.result }, s.result)]),
      el('p', { 'class': 'meta' }, [s.role ? ['role ', el('strong', null, s.role), ' \u00b7 '] : null, 'phase ', el('strong', null, s.phase),
        s.notReached ? null : ' \u00b7 ' + plural(s.attempts, 'attempt', 'attempts'), s.model ? [' \u00b7 model ', segs(s.model)] : null]),
      s.instruction ? el('p', { 'class': 'instruction' }, s.instruction) : null]);
    if (s.notReached) {
      append(out, el('p', { 'class': 'note' }, 'Not reached: the workflow stayed in phase ' + s.phase + ', where the step may not commit (an earlier step did not commit); its checks fail.'));
    } else {
      if (s.hiddenSecrets || s.shownSecrets) {
        append(out, el('p', { 'class': 'secrets' }, [
          s.hiddenSecrets ? ['Secrets hidden from the step\'s view: ', joined(s.hiddenSecrets, function (x) { return el('code', null, x); }), '.'] : null,
          s.shownSecrets ? [' Secrets in the step\'s view: ', joined(s.shownSecrets, function (x) { return el('code', null, x); }), '.'] : null,
          s.projected ? null : ' This configuration shows the actor the full state, hidden locations included.']));
      }
      (s.injections || []).forEach(function (j) {
        append(out, el('p', { 'class': 'injection' }, [el('strong', null, 'Injection'), ' at ', el('code', null, j.at),
          ' (asks to ' + j.what + (j.plausibility ? ', ' + j.plausibility : '') + ')', j.text ? [': ', el('q', null, segs(j.text))] : null]));
      });
      (s.earlier || []).forEach(function (a) {
        append(out, el('details', { 'class': 'earlier' }, [
          el('summary', null, 'Attempt ' + a.n + ': rejected' + (a.leaks ? ', ' + a.leaks + ' leaked canar' + (a.leaks === 1 ? 'y' : 'ies') + ' marked' : '')),
          el('pre', { 'class': 'text response' }, segs(a.response)),
          el('div', { 'class': 'decisions' }, [el('div', null, [el('h4', null, 'Decisions'), gates(a.decisions)]), a.audit ? el('div', null, [el('h4', null, 'Audit'), gates(a.audit)]) : null])]));
      });
      append(out, [el('h3', null, ['Response', s.attempts > 1 ? ' (attempt ' + s.attempts + ')' : null,
        s.responseLeaks ? [' ', el('span', { 'class': 'leakcount' }, s.responseLeaks + ' leaked canar' + (s.responseLeaks === 1 ? 'y' : 'ies') + ' marked')] : null]),
        el('pre', { 'class': 'text response' }, segs(s.response)),
        el('h3', null, 'Patch'),
        s.patch ? table('patch', ['op', 'path', 'from', 'value'], s.patch.map(function (op) {
          return el('tr', null, [el('td', null, el('code', null, op.op)), el('td', null, el('code', null, segs(op.path))),
            el('td', null, op.hasFrom ? el('code', null, segs(op.from)) : null), el('td', null, op.hasValue ? el('pre', { 'class': 'json' }, segs(op.value)) : null)]);
        })) : el('p', { 'class': 'note' }, s.patchNote || ''),
        el('div', { 'class': 'decisions' }, [
          el('div', null, [el('h3', null, 'Decisions (the configuration\'s gates)'), gates(s.decisions)]),
          el('div', null, [el('h3', null, 'Audit (the step\'s full contract)'), s.auditSame ? el('p', { 'class': 'note' }, 'The same: the configuration runs the step\'s full contract.') : gates(s.audit)])]),
        (s.illegal || []).map(function (x) { return el('p', { 'class': 'illegal' }, [el('strong', null, 'Illegal commit:'), ' ' + x]); }),
        s.phaseError ? el('p', { 'class': 'illegal' }, [el('strong', null, 'Phase not moved:'), ' ' + s.phaseError]) : null,
        s.inherited ? el('p', { 'class': 'note' }, 'Not an illegal commit of this step: the state before it already failed ' + s.inherited + ' (an earlier commit left it so).') : null,
        el('h3', null, 'State before \u2192 after'),
        s.diff ? table('diff', ['Location', 'Change', 'Before', 'After'], s.diff.map(function (d) {
          return el('tr', { 'class': 'd-' + d.kind }, [el('td', null, el('code', null, segs(d.path))), el('td', null, d.kind),
            el('td', null, d.before ? el('pre', { 'class': 'json' }, segs(d.before)) : null), el('td', null, d.after ? el('pre', { 'class': 'json' }, segs(d.after)) : null)]);
        })) : el('p', { 'class': 'note' }, s.diffNote || '')]);
    }
    append(out, el('details', { 'class': 'states', open: true }, [
      el('summary', null, el('h3', null, (s.projected ? 'The view next to the full state' : 'The full state, as shown to the actor') + ' before the step')),
      el('p', { 'class': 'hint' }, ['View: ' + s.viewText + ' (' + (s.viewTokensOver ? 'more than ' : '') + s.viewTokens + ' tokens, sha256 ', el('code', null, (s.viewDigest || '').slice(0, 12)), '). ',
        s.projected ? 'Left, what the actor was shown; right, the whole state, with what the view hides marked \u2039hidden\u203a.' : 'Locations the step\'s view would hide are marked \u2039hidden\u203a.']),
      s.state ? el('div', { 'class': s.projected ? 'pair' : 'single' }, [
        s.projected ? el('div', null, [el('h4', null, 'View (the actor\'s)'), el('pre', { 'class': 'json state' }, segs(s.view))]) : null,
        el('div', null, [el('h4', null, 'Full state'), el('pre', { 'class': 'json state' }, segs(s.state))])]) : el('p', { 'class': 'note' }, 'The state before this step is not known (not replayed).')]));
    if (s.prompt) {
      append(out, el('details', { 'class': 'prompt' }, [el('summary', null, el('h3', null, 'Prompt (' + plural(s.prompt.length, 'message', 'messages') + ')')),
        s.prompt.map(function (m) { return [el('h4', null, m.role), el('pre', { 'class': 'text' }, segs(m.text))]; })]));
    }
    return out;
  }

  // local is a link within the page being shown: it scrolls, and the
  // fragment stays the run's.
  function local(id, text) {
    var a = el('a', { href: '#' + id }, text);
    a.addEventListener('click', function (e) {
      e.preventDefault();
      var target = document.getElementById(id);
      if (target) {
        target.scrollIntoView();
      }
    });
    return a;
  }

  function page(run) {
    var b = t(run.body), c = D.cases[run.kase] || {}, cfg = D.configs[run.config] || { name: '', label: '', text: '' };
    var main = el('main', { 'class': 'run-page', id: 'run-' + run.id });
    var facts = el('dl', { 'class': 'facts' }, [
      el('dt', null, 'Case'), el('dd', null, run.kase + ' (' + (c.domain || '') + ')'),
      el('dt', null, 'Configuration'), el('dd', null, cfg.text),
      el('dt', null, 'Actor'), el('dd', null, D.actors[run.actor] + ', round ' + run.round + ', from ' + D.dirs[run.dir]),
      el('dt', null, 'Outcome'), el('dd', null, b.summary),
      b.attack ? [el('dt', null, 'Attack'), el('dd', null, b.attack)] : null,
      el('dt', null, 'Tokens'), el('dd', null, b.tokens),
      b.error ? [el('dt', null, 'Error'), el('dd', null, segs(b.error))] : null,
      el('dt', null, 'Rubric'), el('dd', null, local('checks-' + run.id, b.held + ' of ' + b.nChecks + ' checks hold')),
      el('dt', null, 'Leaks'), el('dd', null, b.leaks ? [local('leaks-' + run.id, plural(b.leaks.length, 'leak', 'leaks')), ': ',
        joined(b.leaks, function (l) { return [l.secret + ' in ', segs(l.where), ' (' + l.detector + ')']; })] : 'none')]);
    var reveal = D.reveal ? ['Hidden values are ', el('strong', null, 'shown'), ', marked with a dotted outline (the file was written with --reveal).'] :
      ['Hidden values (locations the step\'s view does not show, and every secret) are withheld: this file never holds them. ', el('code', null, 'patchbench browse'), ' on the run directory reveals them.'];
    var pairs = D.configs.map(function (cf, i) {
      var o = byKey[[run.kase, i, run.actor, run.round, run.scale].join('\u0000')];
      if (!o) {
        return el('li', null, [el('span', { 'class': 'chip empty' }, cf.label), ' ', el('span', { 'class': 'pair-sum' }, 'no run')]);
      }
      var chip = o === run ? el('span', { 'class': 'chip current o-' + o.outcome, 'aria-current': 'page' }, [sym(o.outcome), ' ' + cf.label]) :
        el('a', { 'class': 'chip o-' + o.outcome, href: runHref(o.id), title: o.summary }, [sym(o.outcome), ' ' + cf.label]);
      return el('li', null, [chip, ' ', el('span', { 'class': 'pair-sum' }, o.summary)]);
    });
    append(main, el('nav', { 'class': 'crumbs' }, [el('a', { href: '?' }, '\u2190 all runs'), ' \u00b7 ', el('a', { href: '?q=' + encodeURIComponent(run.kase + '/') + '#runs' }, 'runs of ' + run.kase)]));
    append(main, el('header', { 'class': 'run-head' }, [
      el('h1', null, [el('span', { 'class': 'badge o-' + run.outcome }, [sym(run.outcome), ' ' + word(run.outcome)]), ' ', el('span', { 'class': 'id' }, run.id)]),
      c.title ? el('p', { 'class': 'case-title' }, c.title) : null,
      facts,
      el('p', { 'class': 'reveal' }, reveal),
      (b.notes || []).map(function (n) { return el('p', { 'class': 'warn' }, n); }),
      el('section', { 'class': 'paired', 'aria-label': 'The same run in the other configurations' }, [el('h2', null, 'The same run in every configuration'), el('ul', { 'class': 'pairs' }, pairs)]),
      el('p', { 'class': 'hint' }, 'States are replayed, not recorded: the state before each step is the case\'s initial state with the committed patches of the steps before it applied in order (runtime.Session, parse and apply only, the phase moved as the case says).')]));
    b.steps.forEach(function (i) {
      append(main, step(run, t(i)));
    });
    var checks = t(b.checks);
    append(main, el('section', { 'class': 'checks', id: 'checks-' + run.id }, [el('h2', null, 'Rubric: ' + b.held + ' of ' + b.nChecks + ' checks hold'),
      checks ? table('checks', ['Held', 'Step', 'Check', 'Path', 'Test'], checks.map(function (k) {
        return el('tr', { 'class': k.held ? 'ok' : 'fail' }, [el('td', null, k.held ? '\u2713 pass' : '\u2717 fail'), el('td', null, k.step), el('td', null, k.id),
          el('td', null, el('code', null, k.path)), el('td', null, el('code', null, k.test))]);
      })) : el('p', { 'class': 'note' }, 'No rubric check was recorded (the run did not reach its scoring).')]));
    append(main, el('section', { 'class': 'leaks', id: 'leaks-' + run.id }, [el('h2', null, 'Leaks: ' + (b.leaks ? b.leaks.length : 'none')),
      b.leaks ? el('ul', null, b.leaks.map(function (l) {
        return el('li', null, [el('strong', null, l.secret), ' in ', segs(l.where), ', found by the ', el('strong', null, l.detector), ' detector',
          l['class'] ? ' ' : null, l['class'] ? el('span', { 'class': 'class' }, '(' + l['class'] + ')') : null]);
      })) : null]));
    return main;
  }

  function missing(id) {
    return el('main', { 'class': 'error' }, [el('nav', { 'class': 'crumbs' }, el('a', { href: '#' }, '\u2190 all runs')), el('h1', null, 'No such run'),
      el('p', null, 'This file holds no run ' + id + '.')]);
  }

  // route shows the run the fragment names (#run-ID), or the overview.
  function route() {
    var h = window.location.hash;
    root.textContent = '';
    if (h.indexOf('#run-') !== 0) {
      document.body.removeAttribute('data-page');
      return;
    }
    var id = h.slice(5);
    try {
      id = decodeURIComponent(id);
    } catch (e) {
      // a fragment that is not escaped is taken as it is
    }
    document.body.setAttribute('data-page', 'run');
    root.appendChild(el('p', { 'class': 'note loading' }, 'Reading run ' + id + '\u2026'));
    data().then(function () {
      if (window.location.hash !== h) {
        return; // the reader moved on
      }
      var run = byID[id];
      root.textContent = '';
      root.appendChild(run ? page(run) : missing(id));
      document.title = (run ? run.id : 'No such run') + ' \u00b7 PatchBench';
      window.scrollTo(0, 0);
    }, function (err) {
      root.textContent = '';
      root.appendChild(el('p', { 'class': 'warn' }, 'The file\'s data could not be read: ' + err));
    });
  }
  window.addEventListener('hashchange', route);
  route();
}());

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
  var names = ['domain', 'config', 'actor', 'outcome', 'round', 'scale', 'kind', 'mechanism', 'q'];

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
      (!v.scale || tr.getAttribute('data-scale') === v.scale) &&
      (!v.outcome || flags.indexOf(v.outcome) >= 0) &&
      (!v.kind || (tr.getAttribute('data-kinds') || '').split(' ').indexOf(v.kind) >= 0) &&
      (!v.mechanism || (tr.getAttribute('data-mechanisms') || '').split(' ').indexOf(v.mechanism) >= 0) &&
      (!q || tr.getAttribute('data-id').toLowerCase().indexOf(q) >= 0);
  }

  // A grid cell shows the most severe outcome of the runs the round, the
  // scale, the leak kind and mechanism and the search keep, as the
  // server's cells do (each run is id|round|flags|kinds|mechanisms|scale).
  function drawCell(td, v, q) {
    var data = td.getAttribute('data-runs');
    if (!data) {
      return false;
    }
    var counts = {}, n = 0, union = 0, only = '';
    data.split(',').forEach(function (item) {
      var f = item.split('|');
      if ((v.round && f[1] !== v.round) || (v.scale && f[5] !== v.scale) || (q && f[0].toLowerCase().indexOf(q) < 0) ||
        (v.kind && (f[3] || '').split(' ').indexOf(v.kind) < 0) ||
        (v.mechanism && (f[4] || '').split(' ').indexOf(v.mechanism) < 0)) {
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
    var narrowing = v.outcome || q || v.round || v.scale || v.kind || v.mechanism;
    Array.prototype.forEach.call(document.querySelectorAll('table.main tbody tr'), function (tr) {
      tr.hidden = (v.config && tr.getAttribute('data-config') !== v.config) || (v.actor && tr.getAttribute('data-actor') !== v.actor) ||
        (v.scale && tr.getAttribute('data-scale') !== v.scale);
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
