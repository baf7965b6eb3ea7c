// The lab's service worker: after a first visit, the site works offline and a repeat visit boots from the cache.
//
// Served from the site root (site_assets/prebuild.py writes it to docs/sw.js), so its scope is every page, at a
// domain root and under a GitHub Pages sub-path alike: every URL here resolves against this file's own URL.
//
// One cache per build, named by the build digest (BUILD.version, which prebuild.py writes below; it changes with
// any input of the site). Installing precaches BUILD.files, what every page needs to boot (Pyodide, the core
// archive, the lab's scripts and styles) and the sitemap, each revalidated with the server so no stale HTTP-cached
// copy gets in. The page itself, its widgets, its Plotly bundle, KaTeX and the theme's own files (their names
// differ between mkdocs and Zensical) are cached when the page reports what it loaded (js/offline.js, the CACHE
// message), and anything else the site fetches is cached as it passes: a page works offline once it was visited,
// and a first visit downloads nothing its page does not use. A page neither cached nor reachable gets a page of the
// worker's own that says so and links the cached pages.
// Every same-origin GET is answered from the cache first, ignoring the query string (pages keep their state
// there; the worker adds ?v= to the core archive). A redeploy changes this file's bytes, the browser installs
// the new worker, and activating it deletes every older cache of the lab.
//
// The Python worker keeps its memory snapshot in a cache of its own ("sd-snapshot", see js/runtime/worker.js),
// outside the "sd-lab-" prefix: it outlives redeploys that change neither Pyodide nor the core, and that worker
// prunes it.
//
// An update takes over at once (skipWaiting): a page already open keeps its document, and what it fetches later
// comes from the new build.
//
// Messages (page -> worker, answered on the MessagePort that comes with them):
//   {type: "CACHE", urls: [...]}   cache these same-origin URLs if missing -> {version, cached: number}

const BUILD = { version: "dev", files: [] }; // written by prebuild.py

const PREFIX = "sd-lab-";
const CACHE = PREFIX + BUILD.version;
const SCOPE = new URL("./", self.location.href).href;

// A fresh copy from the server (a conditional request when the HTTP cache holds one), stored under its bare URL.
async function store(cache, url) {
  const response = await fetch(new Request(url, { cache: "no-cache", credentials: "same-origin" }));
  if (response.status !== 200 || response.redirected) {
    throw new Error(`${response.redirected ? "redirected" : `${response.status} ${response.statusText}`}: ${url}`);
  }
  await cache.put(url, response);
}

function inScope(url) {
  return url.startsWith(SCOPE) && url !== self.location.href;
}

function bare(url) {
  const clean = new URL(url);
  clean.search = "";
  clean.hash = "";
  return clean.href;
}

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      await Promise.all(BUILD.files.map((path) => store(cache, new URL(path, SCOPE).href)));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      const old = (await caches.keys()).filter((name) => name.startsWith(PREFIX) && name !== CACHE);
      await Promise.all(old.map((name) => caches.delete(name)));
      await self.clients.claim();
    })(),
  );
});

// Offline, a page never visited is not in the cache: the browser's own error page took the reader out of the site.
// This one says what happened and links the pages that do work offline (the cached pages, by their titles).
async function offlinePage(cache) {
  const pages = [];
  for (const request of await cache.keys()) {
    if (!request.url.endsWith("/")) continue;
    const html = await (await cache.match(request)).text();
    const title = /<title>([^<]*)<\/title>/.exec(html)?.[1] || request.url;
    pages.push(`<li><a href="${request.url}">${title}</a></li>`);
  }
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Offline</title><link rel="icon" href="data:,"><style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #222; background: #fff; }
a { color: #3949ab; }
@media (prefers-color-scheme: dark) { body { color: #e2e4e9; background: #1e2129; } a { color: #9fa8da; } }
</style></head><body><main>
<h1>This page is not saved for offline reading</h1>
<p>The network did not answer, and the lab keeps only the pages you have opened.</p>
${pages.length ? `<p>These work without the network:</p><ul>${pages.join("")}</ul>` : ""}
<p>Once the network is back, reload this page.</p>
</main></body></html>`;
  // 200, as a page the worker gives: a 503 is logged as a failed load, and the page is the answer.
  return new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
}

async function respond(request) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(request, { ignoreSearch: true });
  if (hit) return hit;
  let response;
  try {
    response = await fetch(request);
  } catch (err) {
    if (request.mode === "navigate") return offlinePage(cache);
    throw err;
  }
  // Only whole, same-origin, direct answers are kept: no errors, no partial content, and no redirected response,
  // which a navigation may not use.
  if (response.status === 200 && response.type === "basic" && !response.redirected) {
    await cache.put(bare(request.url), response.clone());
  }
  return response;
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  if (request.method !== "GET" || !inScope(request.url)) return;
  event.respondWith(respond(request));
});

self.addEventListener("message", (event) => {
  const { data, ports } = event;
  if (data?.type !== "CACHE" || !ports[0]) return;
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const wanted = [...new Set((data.urls || []).filter((url) => typeof url === "string" && inScope(url)).map(bare))];
      let cached = 0;
      for (const url of wanted) {
        if (await cache.match(url)) continue;
        // A file the page loaded but the server no longer has is skipped: the cache holds what can be served.
        await store(cache, url).then(
          () => cached++,
          () => {},
        );
      }
      ports[0].postMessage({ version: BUILD.version, cached });
    })(),
  );
});
