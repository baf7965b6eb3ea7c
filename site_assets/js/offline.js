// Offline and repeat visits: registers the service worker (sw.js at the site root, see site_assets/sw.js) once
// the page has finished its own start-up, then tells it which of the theme's files this page loaded.
//
// Registration waits until Python is ready and Plotly has redrawn the charts: installing the worker fetches the
// whole runtime (about 20 MB unpacked), and doing that while the page still downloads the same files would fetch
// them twice and slow the boot. It then waits until the reader has left the page alone for QUIET_MS (or hidden
// it): on a 2-core machine the install slowed the Python worker's first answers to the page (calls timed right
// after the page went live) from about 8 ms with service workers blocked to 13-55 ms, and with them the first
// slider changes (bench_browser.py, section b). The worker then serves every later visit from its cache. When the
// cache holds everything this page used, <html data-sd-offline="ready"> says so (tests and benchmarks wait on it);
// before that it reads "waiting" while the page listens for the reader's input, then "installing".
// if service workers are unavailable (an insecure origin, some private modes), the page works as before, online
// only.

const root = document.documentElement;
const QUIET_MS = 2000;

function chartsDone() {
  // lab.js sets <html data-sd-charts="plotly"> once Plotly has taken over; that happens only after Python is ready.
  if (root.dataset.sdCharts === "plotly") return Promise.resolve();
  return new Promise((resolve) => {
    const watch = new MutationObserver(() => {
      if (root.dataset.sdCharts !== "plotly") return;
      watch.disconnect();
      resolve();
    });
    watch.observe(root, { attributes: true, attributeFilter: ["data-sd-charts"] });
  });
}

// Resolves once no pointer, key, wheel or input event has come for QUIET_MS, or the page is hidden.
function readerQuiet() {
  return new Promise((resolve) => {
    const events = ["pointerdown", "keydown", "wheel", "input", "visibilitychange"];
    let timer = null;
    const done = () => {
      clearTimeout(timer);
      for (const type of events) removeEventListener(type, again, true);
      resolve();
    };
    const again = () => {
      clearTimeout(timer);
      if (document.visibilityState === "hidden") done();
      else timer = setTimeout(done, QUIET_MS);
    };
    for (const type of events) addEventListener(type, again, { capture: true, passive: true });
    again();
  });
}

// Same-origin files this document has loaded: the page itself, the theme's scripts and styles, the sitemap and
// search index Material fetched, the fonts. Its workers' fetches are not listed; the worker precaches the runtime.
function loaded() {
  const urls = [location.href, ...performance.getEntriesByType("resource").map((entry) => entry.name)];
  return urls.filter((url) => url.startsWith(location.origin + "/"));
}

function ask(worker, message) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data);
    worker.postMessage(message, [channel.port2]);
  });
}

async function register() {
  await window.SDLab.ready();
  await chartsDone();
  root.dataset.sdOffline = "waiting";
  await readerQuiet();
  root.dataset.sdOffline = "installing";
  const registration = await navigator.serviceWorker.register(new URL("sw.js", window.SDLab.site), {
    scope: window.SDLab.site,
  });
  await navigator.serviceWorker.ready;
  const reply = await ask(registration.active, { type: "CACHE", urls: loaded() });
  root.dataset.sdOffline = "ready";
  root.dataset.sdOfflineVersion = reply.version;
}

// A failed start-up leaves the page online only; Retry's success does not come back here, which is fine: the next
// visit registers.
if ("serviceWorker" in navigator && window.SDLab) {
  register().catch((err) => {
    if (err?.name !== "SDError") console.warn("offline cache unavailable:", err?.message || err);
  });
}
