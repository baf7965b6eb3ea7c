// The page's side of the Python worker: start-up, calls with ids and time limits, one status for the page.
//   python.state "loading" | "ready" | "error" (python.text in words, python.error the failure); python.ready
//   settles with start-up; python.call(name, args, {timeout}); python.restart() (Retry); python.boot, also
//   <html data-sd-boot>: "snapshot" | "fresh". onStatus(listener) calls it now and on every change.
// A worker that fails to start, errors, stops answering or dies, before or after ready, turns the status to
// "error": pending calls reject, and later ones at once, until restart().

import { CALL_TIMEOUT_MS, MSG, PHASES, message } from "./protocol.js";

// A failure from Python or from the worker, with the line a reader sees.
export class SDError extends Error {
  constructor(reply, handler = null) {
    super(reply.traceback_last_line || "unknown error");
    this.name = "SDError";
    this.traceback = reply.error || this.message;
    this.phase = reply.phase || null;
    this.handler = handler;
    this.title = reply.title || null; // the banner's heading, when it is not Python's
    this.fatal = Boolean(reply.fatal || reply.phase);
    this.shown = false; // set once a banner shows it (and the console has it)
  }
}

const STARTUP_MS = Object.values(PHASES).reduce((sum, p) => sum + p.timeoutMs, 10_000);
const listeners = new Set();

// Expected rejections: failures already on screen and in the console, a failed worker's (the status shows it),
// stopped calls.
addEventListener("unhandledrejection", (event) => {
  const reason = event.reason;
  if (reason?.shown || (reason instanceof SDError && reason.fatal) || reason?.name === "AbortError")
    event.preventDefault();
});

export function onStatus(listener) {
  listeners.add(listener);
  listener(python);
  return () => listeners.delete(listener);
}

export const python = {
  state: "loading",
  text: "Loading Python…",
  error: null,
  worker: null,
  ready: null,
  pending: new Map(), // CALL id -> {resolve, reject, name, timer}

  set(state, text) {
    this.state = state;
    this.text = text;
    for (const listener of [...listeners]) listener(this);
  },

  start() {
    this.error = null;
    this.ready = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.ready.catch(() => {}); // a failure is reported through the status and banners
    this.set("loading", "Loading Python…");
    // The tab's first worker may have been started from <head> before this module loaded: adopt it and what it
    // has sent so far.
    const boot = window.__sdBoot;
    window.__sdBoot = null;
    const worker = (this.worker =
      boot?.worker || new Worker(new URL("worker.js", import.meta.url), { type: "module" }));
    const init = message(MSG.INIT);
    this.initId = init.id;
    const lost = (text) =>
      this.fail({
        traceback_last_line: text,
        fatal: true,
        phase: this.state === "loading" ? this.phase || "runtime" : null,
      });
    worker.onmessage = (event) => this.receive(event.data);
    // The script failed to load, or threw outside a call: no ERROR message will come.
    worker.onerror = (event) => {
      event.preventDefault();
      lost(event.message || "the Python worker failed");
    };
    worker.onmessageerror = () => lost("a message from the Python worker could not be read");
    for (const reply of boot?.queue || []) this.receive(reply);
    if (boot?.error !== undefined && boot?.error !== null) lost(boot.error || "the Python worker failed to load");
    this.startTimer = setTimeout(() => lost(`Python did not start within ${STARTUP_MS / 1000} s`), STARTUP_MS);
    worker.postMessage(init);
  },

  receive(reply) {
    if (reply.type === MSG.PROGRESS) {
      this.phase = reply.phase;
      this.set("loading", `Loading Python… (${reply.phase})`);
    } else if (reply.type === MSG.READY) {
      clearTimeout(this.startTimer);
      this.boot = document.documentElement.dataset.sdBoot = reply.boot;
      this.set("ready", "Python is ready");
      this.settle.resolve(reply.version);
    } else if (reply.type === MSG.ERROR && reply.id === this.initId) {
      this.fail(reply);
    } else if (reply.type === MSG.RESULT || reply.type === MSG.ERROR) {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      clearTimeout(waiter.timer);
      if (reply.type === MSG.RESULT) waiter.resolve(JSON.parse(reply.value));
      else waiter.reject(new SDError(reply, waiter.name));
      if (reply.fatal) this.fail(reply);
    }
  },

  rejectAll(error) {
    clearTimeout(this.startTimer);
    for (const waiter of this.pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.pending.clear();
    this.settle.reject(error);
  },

  // The worker is of no more use: the status says so, and every pending and later call fails with this error.
  fail(reply) {
    if (this.error) return;
    const error = (this.error = reply instanceof SDError ? reply : new SDError(reply));
    error.fatal = true;
    this.set(
      "error",
      `Error: ${error.phase ? `Python failed to start (${error.phase})` : "the Python worker stopped"}`,
    );
    this.rejectAll(error);
    this.ready = Promise.reject(error); // later calls fail at once
    this.ready.catch(() => {});
  },

  async call(name, args, { timeout = CALL_TIMEOUT_MS } = {}) {
    await this.ready;
    if (this.error) throw this.error; // the worker failed while this call waited for start-up
    return new Promise((resolve, reject) => {
      const msg = message(MSG.CALL, { name, args: JSON.stringify(args ?? {}) });
      const timer = setTimeout(
        () => this.fail({ traceback_last_line: `the Python worker did not answer ${name} within ${timeout / 1000} s` }),
        timeout,
      );
      this.pending.set(msg.id, { resolve, reject, name, timer });
      this.worker.postMessage(msg);
    });
  },

  restart() {
    const old = this.worker;
    old.onmessage = old.onerror = old.onmessageerror = null;
    old.terminate();
    const stopped = new SDError({ traceback_last_line: "the Python worker was restarted" });
    stopped.shown = true; // expected: nothing to report
    this.rejectAll(stopped); // whoever still awaits the old start-up hears of the restart
    this.phase = null;
    this.start();
  },
};
