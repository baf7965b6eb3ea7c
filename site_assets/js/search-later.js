// The theme's search worker, started once the page's Python has settled (a classic worker, in place of the one
// mkdocs-material 9.8 names in the page's #__config: overrides/main.html points "search" here, with the theme's
// worker after the "#" and the name of a BroadcastChannel of this page before it).
//
// Why: the theme builds its search index as the page loads, a lunr index of every page's text, in its worker.
// On a 2-core machine that took CPU from Pyodide's boot: ready came ~0.06x of a bare Pyodide boot later
// (benchmarks/bench_browser.py). Until the page says "go" on the channel, the theme's messages are held here.
// The page says it (window.__sdSearch.go, overrides/main.html) when Python is ready or has failed (js/lab.js),
// when the reader focuses the search box, or on load when the lab's scripts never ran. This worker asks
// ("waiting") when it starts, in case the page said it before it listened. Any message other than the index's
// set-up ({type: 0}) starts it too.

const [channelName, theme] = decodeURIComponent(self.location.hash.slice(1)).split("|");
const held = [];
let started = false;
const channel = new BroadcastChannel(channelName);

function start() {
  if (started) return;
  started = true;
  channel.close();
  removeEventListener("message", hold);
  importScripts(new URL(theme, self.location.href).href); // registers the theme's own "message" listener
  for (const data of held.splice(0)) dispatchEvent(new MessageEvent("message", { data }));
}

function hold(event) {
  event.stopImmediatePropagation();
  held.push(event.data);
  if (event.data?.type !== 0) start();
}

addEventListener("message", hold);
channel.onmessage = (event) => event.data === "go" && start();
channel.postMessage("waiting");
