/* cutelab interactive figures: hover a cell for what it means, click a thread to highlight
   its values, zoom (wheel, +/-) and pan (drag) the SVG. Works on the output of
   cutelab.render.html.fragment: <div class="cutelab-fig"> holding an <svg> whose panels are
   <g class="grid" data-rows data-cols data-cw data-ch> (cell (r, c) at (c*cw, r*ch)) and a
   <script type="application/json" class="cutelab-cells"> with one entry per panel.
   No dependencies, no network. */
(function () {
  "use strict";
  if (window.CutelabFigure) return;
  var NS = "http://www.w3.org/2000/svg";
  var tip = null;

  function tipEl() {
    if (!tip || !tip.isConnected) {
      tip = document.createElement("div");
      tip.className = "cutelab-tip";
      tip.style.display = "none";
      document.body.appendChild(tip);
    }
    return tip;
  }

  function field(info, name, k) {
    var f = info.fields[name];
    return f ? f[k] : undefined;
  }

  /* The lines shown for cell (r, c) of panel info. */
  function describe(info, r, c) {
    var k = r * info.cols + c, lines = [];
    if (info.style === "table") {  /* index -> entry (a coordinate table) */
      lines.push("offset  " + (info.row_ids ? info.row_ids[r] : r));
      lines.push("coord   " + field(info, "label", k));
      return lines.join("\n");
    }
    var row = info.row_ids ? info.row_ids[r] : r, col = info.col_ids ? info.col_ids[c] : c;
    var crd;
    if (info.coord_rows) {
      crd = info.coord_cols ? "(" + info.coord_rows[r] + "," + info.coord_cols[c] + ")" : info.coord_rows[r];
    } else {
      crd = "(" + row + "," + col + ")";
    }
    if (info.index_rows !== null && info.index_rows !== undefined) lines.push("index   " + (row + info.index_rows * col));
    lines.push("coord   " + crd);
    var off = field(info, "offset", k);
    if (off !== undefined) lines.push("offset  " + off);
    var thr = field(info, "thread", k);
    if (thr !== undefined) {
      if (thr < 0) {
        lines.push("thread  - (no thread owns this cell)");
      } else {
        var blk = field(info, "block", k);
        if (blk !== undefined) lines.push("block   " + blk);
        lines.push("thread  " + thr);
        lines.push("value   " + field(info, "value", k));
      }
    }
    var bank = field(info, "bank", k);
    if (bank !== undefined && bank >= 0) lines.push("bank    " + bank);
    var tipText = field(info, "tip", k);
    if (tipText) lines.push("held by " + tipText);
    var lab = field(info, "label", k);
    if (lab !== undefined && lab !== "") lines.push("label   " + lab);
    var key = field(info, "key", k);
    var leg = key !== undefined ? info.legend[String(key)] : undefined;
    if (leg !== undefined && thr === undefined) lines.push("colour  " + leg);
    return lines.join("\n");
  }

  function init(root, opts) {
    if (!root || root.cutelab) return root && root.cutelab;
    opts = opts || {};
    var wheelNeedsKey = opts.wheel !== "always";
    var svg = root.querySelector("svg");
    var dataEl = root.querySelector("script.cutelab-cells");
    if (!svg || !dataEl) return null;
    var data = JSON.parse(dataEl.textContent);
    var grids = Array.prototype.slice.call(svg.querySelectorAll("g.grid"));
    if (grids.length !== data.length) {
      if (window.console) console.warn("cutelab: " + grids.length + " panels but " + data.length + " cell tables");
      return null;
    }
    if (data.some(function (d) { return d.fields.tip; })) {
      /* the tooltip shows the holders: the SVG's own <title> pop-ups would repeat them */
      Array.prototype.forEach.call(svg.querySelectorAll("g.grid title"), function (t) { t.remove(); });
    }
    var vb0 = (svg.getAttribute("viewBox") || "0 0 " + svg.getAttribute("width") + " " + svg.getAttribute("height"))
      .split(/[ ,]+/).map(Number);
    var W = vb0[2], H = vb0[3];
    /* The view: scale z (screen px per picture px; 1 = the picture's natural size) and the
       picture point (x, y) at the view's top-left. The <svg> element is as large as the picture
       at z, but never larger than the space it has (avail()); its viewBox is the visible part.
       "fit" is the largest z <= 1 that shows all of it: big pictures open whole, small ones
       keep their natural size. */
    var view = { z: 1, x: vb0[0], y: vb0[1], fit: 1, fitted: true };
    var state = { thread: null, block: null, zoom: 1, data: data, root: root };
    /* the space the picture has; opts.size: [w, h] measured by the page before the picture went
       in (the first fit then costs no extra layout of a big SVG) */
    var given = opts.size || null;
    function avail() {
      var a = given;
      given = null;
      if (!a) {
        a = [root.clientWidth, opts.height ? opts.height() : Math.max(240, window.innerHeight * 0.85)];
      }
      return [Math.max(a[0] - 2, 60), Math.max(a[1], 60)];  /* less the frame's border */
    }
    function setAttr(name, v) { if (svg.getAttribute(name) !== v) svg.setAttribute(name, v); }

    var bar = document.createElement("div");
    bar.className = "cutelab-bar";
    var hasThreads = data.some(function (d) { return d.fields.thread; });
    var help = document.createElement("span");
    help.className = "cutelab-help";
    help.textContent = "hover a cell" + (hasThreads ? " \u00b7 click a thread to highlight its values" : "") +
      " \u00b7 " + (wheelNeedsKey ? "ctrl+wheel" : "wheel") + " or +/- to zoom, drag to pan, double-click to fit";
    var sel = document.createElement("span");
    sel.className = "cutelab-selected";
    function button(text, title, cls, fn) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = text;
      b.title = title;
      b.className = "cutelab-" + cls;
      b.addEventListener("click", fn);
      bar.appendChild(b);
      return b;
    }
    bar.appendChild(help);
    button("+", "zoom in about the centre of the view", "zoom-in", function () { zoomCentre(1.5); });
    button("\u2212", "zoom out about the centre of the view", "zoom-out", function () { zoomCentre(1 / 1.5); });
    button("fit", "the whole picture (at most its natural size)", "reset", function () { fit(); });
    button("1:1", "natural size", "natural", function () { zoomCentre(1 / view.z); });
    /* what the cells show: their value (the label drawn), their index, or their coordinate */
    var showSel = null, shown = "value", saved = null;
    var labelled = grids.some(function (g) { return g.querySelector("g.labels > text"); });
    if (labelled) {
      showSel = document.createElement("select");
      showSel.className = "cutelab-show";
      showSel.title = "what the cells show";
      [["value", "cells: value"], ["index", "cells: index"], ["coord", "cells: coordinate"]].forEach(function (o) {
        var op = document.createElement("option");
        op.value = o[0]; op.textContent = o[1];
        showSel.appendChild(op);
      });
      showSel.addEventListener("change", function () { show(showSel.value, true); });
      bar.appendChild(showSel);
    }
    bar.appendChild(sel);
    root.insertBefore(bar, root.firstChild);

    /* the index of cell (r, c) of panel info (colexicographic), or null where the panel has none */
    function cellIndex(info, r, c) {
      if (info.index_rows === null || info.index_rows === undefined || info.style === "table") return null;
      var row = info.row_ids ? info.row_ids[r] : r, col = info.col_ids ? info.col_ids[c] : c;
      return row + info.index_rows * col;
    }
    function cellCoord(info, r, c) {
      if (info.style === "table") return null;
      if (info.coord_rows) return info.coord_cols ? "(" + info.coord_rows[r] + "," + info.coord_cols[c] + ")" : info.coord_rows[r];
      var row = info.row_ids ? info.row_ids[r] : r, col = info.col_ids ? info.col_ids[c] : c;
      return "(" + row + "," + col + ")";
    }
    /* show "value", "index" or "coord" in every labelled cell; a panel without an index keeps its values */
    function show(mode, tell) {
      if (["value", "index", "coord"].indexOf(mode) < 0) mode = "value";
      if (!labelled) return 0;
      if (!saved) {  /* the drawn labels, once: (panel, text element, its children, y, font size) */
        saved = [];
        grids.forEach(function (g, i) {
          Array.prototype.forEach.call(g.querySelectorAll("g.labels > text"), function (t) {
            saved.push({ i: i, t: t, kids: Array.prototype.slice.call(t.childNodes), y: t.getAttribute("y"),
                         fs: t.getAttribute("font-size") });
          });
        });
      }
      var kept = 0;
      saved.forEach(function (s) {
        var g = grids[s.i], info = data[s.i], cw = +g.dataset.cw, ch = +g.dataset.ch;
        var x = +s.t.getAttribute("x"), r = Math.floor(+s.y / ch), c = Math.floor(x / cw);
        var text = mode === "index" ? cellIndex(info, r, c) : mode === "coord" ? cellCoord(info, r, c) : null;
        while (s.t.firstChild) s.t.removeChild(s.t.firstChild);
        if (text === null) {
          s.kids.forEach(function (k) { s.t.appendChild(k); });
          s.t.setAttribute("y", s.y);
          if (s.fs === null) s.t.removeAttribute("font-size"); else s.t.setAttribute("font-size", s.fs);
          if (mode !== "value") kept++;
          return;
        }
        text = String(text);
        s.t.appendChild(document.createTextNode(text));
        /* one line, centred; smaller where the text is wider than the cell */
        var fs = Math.min(12, Math.max(5, (cw - 4) / (0.62 * text.length)));
        s.t.setAttribute("font-size", fs.toFixed(1));
        s.t.setAttribute("y", String(+(r * ch + ch / 2 + fs / 3).toFixed(2)));
      });
      shown = mode;
      state.show = mode;
      root.dataset.show = mode;
      root.dataset.showKept = String(kept);
      if (showSel && showSel.value !== mode) showSel.value = mode;
      if (tell) {
        var ev;
        try { ev = new CustomEvent("cutelab:show", { detail: { show: mode } }); } catch (err) { ev = null; }
        if (ev) root.dispatchEvent(ev);
      }
      return kept;
    }

    function apply(space) {
      var a = space || avail(), z = view.z;
      /* at its fit (or wholly visible) the <svg> hugs the picture; zoomed in, it takes all the
         space it has, so that the point under the pointer can stay where it is */
      var whole = view.fitted || (W * z <= a[0] && H * z <= a[1]);
      var ew = whole ? Math.min(a[0], W * z) : a[0], eh = whole ? Math.min(a[1], H * z) : a[1];
      var vw = ew / z, vh = eh / z;
      /* the view keeps at least a fifth of the picture (of itself, if smaller) in sight */
      var mx = 0.2 * Math.min(vw, W), my = 0.2 * Math.min(vh, H);
      view.x = Math.min(Math.max(view.x, vb0[0] - vw + mx), vb0[0] + W - mx);
      view.y = Math.min(Math.max(view.y, vb0[1] - vh + my), vb0[1] + H - my);
      setAttr("width", String(+ew.toFixed(2)));
      setAttr("height", String(+eh.toFixed(2)));
      setAttr("viewBox", [view.x, view.y, vw, vh].map(function (x) { return +x.toFixed(3); }).join(" "));
      state.zoom = z;
      root.dataset.zoom = z.toFixed(3);
      root.dataset.fit = view.fit.toFixed(3);
    }
    function fit() {
      var a = avail();
      view.fit = Math.min(1, a[0] / W, a[1] / H);
      view.z = view.fit; view.x = vb0[0]; view.y = vb0[1]; view.fitted = true;
      apply(a);
    }
    /* zoom by f, keeping the picture point at (sx, sy) px from the <svg>'s top-left where it is */
    function zoomAt(f, sx, sy) {
      var z = Math.min(16, Math.max(Math.min(view.fit, 1), view.z * f));
      if (z <= view.fit + 1e-9 && f < 1) { fit(); return; }  /* all the way out: the whole picture, placed */
      var px = view.x + sx / view.z, py = view.y + sy / view.z;
      view.z = z; view.x = px - sx / z; view.y = py - sy / z;
      view.fitted = Math.abs(z - view.fit) < 1e-9 && view.x <= vb0[0] && view.y <= vb0[1];
      apply();
    }
    function zoomCentre(f) {
      var r = svg.getBoundingClientRect();
      zoomAt(f, r.width / 2, r.height / 2);
    }
    function pan(dx, dy) {
      view.x -= dx / view.z; view.y -= dy / view.z; view.fitted = false;
      apply();
    }
    /* (panel, r, c) under the pointer, or null. */
    function cellAt(e) {
      for (var i = 0; i < grids.length; i++) {
        var g = grids[i], info = data[i];
        var m = g.getScreenCTM();
        if (!m) continue;
        var p = svg.createSVGPoint();
        p.x = e.clientX; p.y = e.clientY;
        p = p.matrixTransform(m.inverse());
        var c = Math.floor(p.x / +g.dataset.cw), r = Math.floor(p.y / +g.dataset.ch);
        if (r >= 0 && c >= 0 && r < info.rows && c < info.cols) return { i: i, r: r, c: c };
      }
      return null;
    }

    function clearHighlight(quiet) {
      Array.prototype.forEach.call(svg.querySelectorAll(".cutelab-hl, .cutelab-dim"), function (p) { p.remove(); });
      state.thread = null; state.block = null;
      sel.textContent = "";
      delete root.dataset.thread;
      delete root.dataset.block;
      root.dataset.highlighted = "0";
      if (!quiet) announce();
    }
    /* tell the page (the playground keeps the selection in its address) */
    function announce() {
      var ev;
      try {
        ev = new CustomEvent("cutelab:select", { detail: { thread: state.thread, block: state.block } });
      } catch (err) { return; }
      root.dispatchEvent(ev);
    }
    function svgEl(tag, attrs) {
      var e = document.createElementNS(NS, tag);
      for (var k in attrs) e.setAttribute(k, attrs[k]);
      e.setAttribute("pointer-events", "none");
      return e;
    }
    /* Light up one thread's cells: a white veil over the rest of the grid (labels included),
       with holes where the thread's cells are, and a black outline around each of them. */
    function highlight(thr, blk) {
      if (blk === undefined) blk = null;
      clearHighlight(true);
      var total = 0;
      grids.forEach(function (g, i) {
        var info = data[i], T = info.fields.thread, B = info.fields.block;
        if (!T) return;
        var cw = +g.dataset.cw, ch = +g.dataset.ch, cells = [];
        for (var r = 0; r < info.rows; r++) {
          for (var c = 0; c < info.cols; c++) {
            var k = r * info.cols + c;
            if (T[k] !== thr || (blk !== null && B && B[k] !== blk)) continue;
            cells.push("M" + c * cw + " " + r * ch + "h" + cw + "v" + ch + "h-" + cw + "z");
          }
        }
        if (!cells.length) return;
        total += cells.length;
        var W = info.cols * cw, H = info.rows * ch;
        g.appendChild(svgEl("path", { "class": "cutelab-dim", fill: "#fff", "fill-opacity": "0.78", "fill-rule": "evenodd",
                                      d: "M0 0h" + W + "v" + H + "h-" + W + "z" + cells.join("") }));
        g.appendChild(svgEl("path", { "class": "cutelab-hl", fill: "none", stroke: "#000", "stroke-width": "2.2",
                                      d: cells.join("") }));
      });
      if (!total) { announce(); return 0; }  /* no such thread here: nothing selected */
      state.thread = thr; state.block = blk;
      root.dataset.thread = String(thr);
      if (blk !== null) root.dataset.block = String(blk);
      root.dataset.highlighted = String(total);
      sel.textContent = "  selected: " + (blk !== null ? "block " + blk + " " : "") + "thread " + thr +
        " (" + total + " value" + (total === 1 ? "" : "s") + "; click it again or press Escape to clear)";
      announce();
      return total;
    }
    function clickCell(hit) {
      var info = data[hit.i], k = hit.r * info.cols + hit.c;
      var thr = field(info, "thread", k);
      if (thr === undefined || thr < 0) { clearHighlight(); return; }
      var blk = field(info, "block", k);
      blk = blk === undefined ? null : blk;
      if (state.thread === thr && state.block === blk) clearHighlight();
      else highlight(thr, blk);
    }

    var drag = null, last = null;
    svg.addEventListener("mousemove", function (e) {
      var t = tipEl();
      if (drag) {
        var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (!drag.moved && Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; svg.classList.add("cutelab-panning"); }
        if (drag.moved) {
          pan(e.clientX - drag.lx, e.clientY - drag.ly);
          drag.lx = e.clientX; drag.ly = e.clientY;
          t.style.display = "none";
          return;
        }
      }
      var hit = cellAt(e);
      if (!hit) { t.style.display = "none"; last = null; delete root.dataset.hover; return; }
      var key = hit.i + ":" + hit.r + ":" + hit.c;
      if (key !== last) {
        last = key;
        t.textContent = describe(data[hit.i], hit.r, hit.c);
        root.dataset.hover = key;
      }
      t.style.display = "block";
      t.style.left = (e.clientX + 14) + "px";
      t.style.top = (e.clientY + 14) + "px";
    });
    svg.addEventListener("mouseleave", function () {
      tipEl().style.display = "none"; last = null; delete root.dataset.hover;
    });
    svg.addEventListener("mousedown", function (e) {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, lx: e.clientX, ly: e.clientY, moved: false };
      e.preventDefault();  /* no text selection while dragging; so focus by hand, for Escape */
      try { root.focus({ preventScroll: true }); } catch (err) { root.focus(); }
    });
    window.addEventListener("mouseup", function (e) {
      if (!drag) return;
      var d = drag;
      drag = null;
      svg.classList.remove("cutelab-panning");
      if (!d.moved && e.target && svg.contains(e.target)) {
        var hit = cellAt(e);
        if (hit) clickCell(hit);
      }
    });
    svg.addEventListener("dblclick", function (e) { e.preventDefault(); fit(); });
    svg.addEventListener("wheel", function (e) {
      if (wheelNeedsKey && !(e.ctrlKey || e.metaKey)) return;
      e.preventDefault();
      var r = svg.getBoundingClientRect();
      var dy = e.deltaMode === 1 ? e.deltaY * 16 : e.deltaMode === 2 ? e.deltaY * 400 : e.deltaY;
      zoomAt(Math.exp(-dy * 0.0015), e.clientX - r.left, e.clientY - r.top);
    }, { passive: false });
    root.addEventListener("keydown", function (e) { if (e.key === "Escape") clearHighlight(); });
    state.hasThreads = hasThreads;
    root.tabIndex = root.tabIndex >= 0 ? root.tabIndex : 0;

    state.describe = function (i, r, c) { return describe(data[i], r, c); };
    state.setShow = function (mode) { return show(mode, false); };
    state.show = "value";
    state.highlight = highlight;
    state.clear = function () { clearHighlight(); };
    state.zoomAt = zoomAt;
    state.zoomCentre = zoomCentre;
    state.pan = pan;
    state.fit = fit;
    state.reset = fit;
    state.view = view;
    state.natural = [W, H];
    /* the page changed size: a picture still at its fit is fitted again */
    var refit = function () { if (!root.isConnected) return; if (view.fitted) fit(); else apply(); };
    if (window.ResizeObserver) new ResizeObserver(refit).observe(root);
    else window.addEventListener("resize", refit);
    fit();
    var show0 = opts.show || root.getAttribute("data-show");  /* the page's choice, or the file's (--cells) */
    if (show0 && show0 !== "value") show(show0, false);
    root.cutelab = state;
    root.dataset.ready = "1";
    root.dataset.highlighted = "0";
    return state;
  }

  function initAll(scope, opts) {
    Array.prototype.forEach.call((scope || document).querySelectorAll(".cutelab-fig"), function (el) { init(el, opts); });
  }

  window.CutelabFigure = { init: init, initAll: initAll, describe: describe };
})();
