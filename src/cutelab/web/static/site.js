/* cutelab static site (`cutelab site DIR`): the playground's page with cutelab running in the
   browser through Pyodide, from disk (file://) or any static host, with no server.

   Loaded before playground.js. It defines window.cutelabApi, which playground.js calls instead of
   fetch: the same GET /api/... URLs, answered by cutelab.web.server.api() in Pyodide, which runs
   in a Web Worker so that the page stays live while Python starts or computes.

   Browsers refuse fetch(), XHR and import() of file:// URLs, and a worker cannot load a file://
   script; Pyodide fetches its wasm, standard library, lock file and numpy wheel. So `cutelab site`
   writes each file as a script, data/NAME.js, that hands its bytes (base64, gzipped where that
   saves space) to cutelabSite.deliver(); scripts load from file:// like from any host. The page
   passes them to the worker (made from a blob), which runs Pyodide's own scripts from blobs it
   makes and answers Pyodide's fetch() of the other names from them. */
(function () {
  "use strict";
  var manifest = window.cutelabSiteManifest;
  var dataURL = new URL("../data/", document.currentScript.src).href;
  var startedAt = performance.now();
  /* ms from this script's start to each step of the start-up: pyodide, packages, cutelab (imported) */
  var site = window.cutelabSite = { ready: null, loadMs: null, steps: {}, deliver: deliver };
  function mark(step) { site.steps[step] = Math.round(performance.now() - startedAt); }
  function fail(msg) { return new Error("cutelab site: " + msg); }
  function say(text) {
    var t = document.getElementById("timing");
    if (t) t.textContent = text;
  }

  /* ---- the worker: Pyodide, numpy and cutelab; one GET /api/... per message ---- */
  function workerMain() {
    var wait = {}, types = {}, indexURL = "", get = null;
    function entry(name) {
      if (!wait[name]) {
        var e = wait[name] = {};
        e.promise = new Promise(function (res, rej) { e.resolve = res; e.reject = rej; });
      }
      return wait[name];
    }
    function bytesOf(b64) {
      var s = atob(b64), out = new Uint8Array(s.length);
      for (var i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
      return out;
    }
    function got(m) {
      var e = entry(m.file), raw = bytesOf(m.b64);
      if (m.encoding === "raw") { e.resolve(raw); return; }
      if (m.encoding !== "gzip" || typeof DecompressionStream !== "function") {
        e.reject(new Error("cutelab site: " + m.file + ": cannot unpack (" + m.encoding +
                           "; a current Chrome, Edge, Firefox or Safari has DecompressionStream)"));
        return;
      }
      new Response(new Blob([raw]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer()
        .then(function (buf) { e.resolve(new Uint8Array(buf)); }, e.reject);
    }
    var realFetch = self.fetch.bind(self);
    self.fetch = function (input, init) {
      var url = typeof input === "string" ? input : (input && input.url) || String(input);
      if (url.indexOf(indexURL) === 0) {
        var name = decodeURIComponent(url.slice(indexURL.length).split(/[?#]/)[0]);
        if (types[name]) {
          return entry(name).promise.then(function (bytes) {
            return new Response(bytes, { status: 200, headers: { "Content-Type": types[name] } });
          });
        }
      }
      return realFetch(input, init);
    };
    function runScript(name) {  /* a worker cannot importScripts a file:// URL, nor the page's blobs */
      return entry(name).promise.then(function (bytes) {
        var u = URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }));
        try { importScripts(u); } finally { URL.revokeObjectURL(u); }
      });
    }
    function boot(m) {
      return runScript("pyodide.asm.js")
        .then(function () { return runScript("pyodide.js"); })
        .then(function () {
          return self.loadPyodide({ indexURL: indexURL, lockFileURL: indexURL + "pyodide-lock.json",
                                    stdout: function () {}, stderr: function (s) { console.warn(s); } });
        })
        .then(function (py) {
          postMessage({ step: "pyodide" });
          return py.loadPackage(m.packages, { messageCallback: function () {} })
            .then(function () { postMessage({ step: "packages" }); return entry(m.cutelab).promise; })
            .then(function (zip) {
              py.unpackArchive(zip, "zip", { extractDir: m.sitePackages });
              py.runPython("import sys\nif " + JSON.stringify(m.sitePackages) + " not in sys.path: sys.path.insert(0, " +
                           JSON.stringify(m.sitePackages) + ")");
              get = py.pyimport("cutelab.web.site").browser_get;
              py.runPython("import cutelab.web.server, cutelab.web.tabs, cutelab.render.svg, cutelab.render.html");
              postMessage({ step: "cutelab" });
            });
        });
    }
    self.onmessage = function (ev) {
      var m = ev.data;
      if (m.file) { got(m); return; }
      if (m.start) {
        indexURL = m.indexURL;
        types = m.types;
        boot(m).then(function () { postMessage({ ready: true }); },
                     function (err) { postMessage({ failed: String(err && err.message || err) }); });
        return;
      }
      var r, parts;
      try {
        r = get(m.url);
        parts = r.toJs({ dict_converter: Object.fromEntries });
        postMessage({ id: m.id, status: parts[0], body: parts[1], type: parts[2], headers: parts[3] });
      } catch (err) {
        postMessage({ id: m.id, error: String(err && err.message || err) });
      } finally {
        if (r) r.destroy();
      }
    };
  }

  /* ---- the page's side ---- */
  var worker = null, pending = {}, nextId = 0, readyResolve, readyReject;
  site.ready = new Promise(function (res, rej) { readyResolve = res; readyReject = rej; });
  site.ready.then(function () {
    site.loadMs = performance.now() - startedAt;
    say("Python ready in " + (site.loadMs / 1000).toFixed(1) + " s");
  }, function (err) { say(""); console.error(err); });

  /* called by data/NAME.js: the bytes go to the worker as they are */
  function deliver(name, encoding, b64) {
    if (worker) worker.postMessage({ file: name, encoding: encoding, b64: b64 });
  }

  function loadScript(src) {
    return new Promise(function (res, rej) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = function () { res(); };
      s.onerror = function () { rej(fail("cannot load " + src + " (is the site complete? run `cutelab site` again)")); };
      document.head.appendChild(s);
    });
  }

  try {
    worker = new Worker(URL.createObjectURL(new Blob(["(" + workerMain.toString() + ")();"], { type: "text/javascript" })));
  } catch (err) {
    readyReject(fail("this browser cannot start a Web Worker here (" + err + ")"));
  }
  if (worker) {
    worker.onmessage = function (ev) {
      var m = ev.data;
      if (m.step) { mark(m.step); return; }
      if (m.ready) { readyResolve(); return; }
      if (m.failed) { readyReject(fail(m.failed)); return; }
      var p = pending[m.id];
      delete pending[m.id];
      if (!p) return;
      if (m.error !== undefined) { p.reject(fail(m.error)); return; }
      p.resolve(new Response(m.body, { status: m.status, headers: Object.assign({ "Content-Type": m.type }, m.headers) }));
    };
    worker.onerror = function (ev) { readyReject(fail("the worker failed: " + (ev.message || ev))); };
    say("starting Python in the browser (Pyodide " + manifest.pyodide + ", Python " + manifest.python + ")…");
    worker.postMessage({ start: true, indexURL: dataURL, types: manifest.payloads, packages: manifest.packages,
                         cutelab: manifest.cutelab, sitePackages: manifest.sitePackages });
    Object.keys(manifest.payloads).forEach(function (name) {  /* all at once; the worker waits for each */
      loadScript(dataURL + encodeURIComponent(name) + ".js").catch(readyReject);
    });
  }

  /* window.cutelabApi(url) -> a Response, as fetch(url) from `cutelab serve` gives */
  window.cutelabApi = function (url) {
    return site.ready.then(function () {
      return new Promise(function (res, rej) {
        var id = nextId++;
        pending[id] = { resolve: res, reject: rej };
        worker.postMessage({ id: id, url: String(url) });
      });
    });
  };

  /* the export links (.html .svg .txt) point at /api/export?...: compute the file here, save it */
  document.addEventListener("click", function (ev) {
    var a = ev.target && ev.target.closest ? ev.target.closest("a[href]") : null;
    var href = a ? a.getAttribute("href") : "";
    if (href.indexOf("/api/export?") !== 0) return;
    ev.preventDefault();
    window.cutelabApi(href).then(function (r) {
      var cd = r.headers.get("Content-Disposition") || "", m = /filename="([^"]+)"/.exec(cd);
      return r.blob().then(function (blob) {
        if (!r.ok) return blob.text().then(function (t) { throw fail(t); });
        var url = URL.createObjectURL(blob), tmp = document.createElement("a");
        tmp.href = url;
        tmp.download = m ? m[1] : "cutelab";
        document.body.appendChild(tmp);
        tmp.click();
        tmp.remove();
        setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
      });
    }).catch(function (err) {
      var e = document.getElementById("error");
      if (e) { e.textContent = String(err.message || err); e.classList.add("shown"); }
    });
  }, true);
})();
