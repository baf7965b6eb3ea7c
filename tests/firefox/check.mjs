// The built site in Firefox (Debian's firefox-esr), driven by Puppeteer over WebDriver BiDi: `make test-firefox`.
//
// The browser suite (tests/browser) runs in Chromium through Playwright. Playwright 1.65's BiDi channel for a stock
// Firefox asks for `emulation.setMediaFeaturesOverride`, which Firefox ESR 153 does not have, so this check uses
// Puppeteer, whose BiDi client works with it. It serves site/ under /lab/ (as GitHub Pages serves a project site)
// and, on each page below: Python goes ready and every widget answers a live call; every chart Plotly can draw is
// drawn by it; a 3D chart is Plotly's WebGL scene where the browser offers WebGL, else the static drawing with its
// note; the first slider, moved one step by the keyboard, gets a new answer painted; the pages after the first boot
// from the Python snapshot the first one stored; no console error or warning,
// uncaught error, or request off the site's origin. It waits on the page's own state, never on time, and prints
// the browser's console for a page that fails. Exit status 1 if any page fails.

import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import puppeteer from "puppeteer-core";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SITE = process.env.SD_SITE || path.join(ROOT, "site");
const FIREFOX = process.env.SD_FIREFOX || "/usr/bin/firefox-esr";
const PREFIX = "/lab/";
const PAGES = ["", "playground/", "sampling/"]; // the 3D lab, the Playground's four charts, the slowest handler
const WAIT_MS = 120_000; // Python's start-up and Plotly's load on a busy 2-core machine
const TYPES = {
  ".css": "text/css",
  ".html": "text/html",
  ".js": "text/javascript",
  ".json": "application/json",
  ".mjs": "text/javascript",
  ".svg": "image/svg+xml",
  ".wasm": "application/wasm",
  ".woff2": "font/woff2",
  ".xml": "application/xml",
  ".zip": "application/zip",
};

function serve() {
  const server = http.createServer((request, response) => {
    let file = decodeURIComponent(new URL(request.url, "http://x").pathname);
    if (!file.startsWith(PREFIX)) return void response.writeHead(404).end();
    if (file.endsWith("/")) file += "index.html";
    file = path.join(SITE, file.slice(PREFIX.length));
    if (!file.startsWith(SITE + path.sep)) return void response.writeHead(404).end();
    fs.readFile(file, (err, body) => {
      if (err) return void response.writeHead(404).end();
      response.writeHead(200, { "content-type": TYPES[path.extname(file)] || "application/octet-stream" }).end(body);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const LIVE = () =>
  document.querySelector('[data-sd-status="ready"]') &&
  document.documentElement.dataset.sdCharts === "plotly" &&
  [...document.querySelectorAll(".md-content .sd-widget")].every((w) => w.dataset.sdLive === "true");

// Every chart on the page: drawn by Plotly, or (3D without WebGL) the static drawing with its note.
const CHARTS = () => {
  const canvas = document.createElement("canvas");
  const webgl = Boolean(canvas.getContext("webgl"));
  const charts = [...document.querySelectorAll(".md-content .sd-chart:not([hidden])")].map((c) => {
    const scene = (c._sdFigure?.data || []).some((t) => t.type === "scatter3d");
    const drawn =
      c.dataset.sdEngine === "plotly"
        ? "plotly"
        : c.dataset.sdStatic
          ? `static (${c.querySelector(".sd-chart__static")?.textContent.slice(0, 40)}…)`
          : c.dataset.sdEngine;
    return {
      label: (c.getAttribute("aria-label") || "").slice(0, 50),
      scene,
      drawn,
      canvas: Boolean(c.querySelector("canvas")),
    };
  });
  return { webgl, charts };
};

const booted = []; // each page's boot: "fresh" | "snapshot"

async function check(browser, base, page_path) {
  const page = await browser.newPage();
  const log = [];
  const problems = [];
  page.on("console", (m) => {
    log.push(`[${m.type()}] ${m.text()}`);
    if (m.type() === "error" || m.type() === "warn") problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => {
    log.push(`[pageerror] ${e.message}`);
    problems.push(`uncaught: ${e.message}`);
  });
  page.on("request", (r) => {
    const url = r.url();
    if (!url.startsWith(base) && !/^(data|blob|about):/.test(url)) problems.push(`off-site request: ${url}`);
  });
  const name = page_path.replace(/\/$/, "") || "home";
  const started = Date.now();
  try {
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(base + page_path);
    await page.waitForFunction(LIVE, { timeout: WAIT_MS, polling: 100 });
    const live = ((Date.now() - started) / 1000).toFixed(1);
    const { webgl, charts } = await page.evaluate(CHARTS);
    if (!charts.length) problems.push("no chart on the page");
    for (const c of charts) {
      const ok = c.scene && !webgl ? c.drawn.startsWith("static") && !c.canvas : c.drawn === "plotly";
      if (!ok) problems.push(`chart "${c.label}": ${c.drawn} (WebGL ${webgl ? "offered" : "not offered"})`);
    }
    const before = await page.evaluate(() => {
      const slider = document.querySelector(".md-content .sd-widget input[type=range]");
      slider.focus();
      return Number(slider.closest(".sd-widget").dataset.sdPaints || 0);
    });
    await page.keyboard.press("ArrowRight");
    const painted = (n) => Number(document.activeElement.closest(".sd-widget").dataset.sdPaints || 0) > n;
    await page.waitForFunction(painted, { timeout: WAIT_MS, polling: 100 }, before);
    // The first page stores Python's memory snapshot (runtime/worker.js) and the next ones boot from it. Closing a
    // page while it stores made Firefox 153 keep a damaged entry, which the next boot found (a warning) and
    // replaced: the page stays open until the snapshot is in Cache Storage.
    const boot = await page.evaluate(() => document.documentElement.dataset.sdBoot);
    if (booted.length && boot !== "snapshot") problems.push(`booted ${boot}, not from the first page's snapshot`);
    booted.push(boot);
    const stored = async () => (await (await caches.open("sd-snapshot")).keys()).length > 0;
    await page.waitForFunction(stored, { timeout: WAIT_MS, polling: 200 });
    const kinds = charts.map((c) => c.drawn.split(" ")[0]).join(", ");
    console.log(
      `${name}: live in ${live} s (${boot} boot); charts: ${kinds}; WebGL ${webgl ? "offered" : "not offered"}; a slider step was answered`,
    );
  } catch (err) {
    problems.push(String(err?.message || err).split("\n")[0]);
  }
  await page.close();
  if (problems.length) {
    console.log(`${name}: FAILED\n  ${problems.join("\n  ")}\n  --- browser console ---\n  ${log.join("\n  ")}`);
  }
  return problems.length === 0;
}

const server = await serve();
const base = `http://127.0.0.1:${server.address().port}${PREFIX}`;
const browser = await puppeteer.launch({ browser: "firefox", executablePath: FIREFOX, headless: true });
let passed = 0;
try {
  console.log(`${await browser.version()}, the site in ${path.relative(ROOT, SITE) || SITE}`);
  for (const page_path of PAGES) if (await check(browser, base, page_path)) passed += 1;
} finally {
  await browser.close();
  server.close();
}
console.log(`Firefox: ${passed} of ${PAGES.length} pages passed`);
process.exitCode = passed === PAGES.length ? 0 : 1;
