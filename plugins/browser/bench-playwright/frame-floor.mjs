// The floor under "type, then a screenshot of the screen after it", read
// straight from Chromium with no driver in between: on a sign-in form,
// focus the field and `Input.insertText`, then `Page.captureScreenshot`
// (PNG encoded for speed, as the driver asks, and JPEG), right after a
// look (pause 0) and after an agent's pause (200 ms). The capture answers
// only once Chromium has drawn a new frame after the input, so its time is
// frame latency, not encoding.
//
// Run: node plugins/browser/bench-playwright/frame-floor.mjs
// (CHROME_PATH names the browser; extra Chromium flags in EXTRA_ARGS,
// e.g. EXTRA_ARGS="--disable-frame-rate-limit --disable-gpu-vsync").
// Prints median milliseconds of 15 tries per row.
import { chromium } from 'playwright-core';
import http from 'node:http';

const FORM = '<!doctype html><title>Sign in</title><h1>Sign in</h1>' +
  '<label>Username <input id=username></label>' +
  '<label>Password <input id=password type=password></label>' +
  '<button id=sign-in>Sign in</button>';
const server = http.createServer((_, res) => {
  res.setHeader('content-type', 'text/html');
  res.end(FORM);
}).listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const url = `http://127.0.0.1:${server.address().port}/`;

// The browser driver's own launch flags (plugins/browser/src/launch.rs).
const args = ['--disable-gpu', '--no-first-run', '--no-default-browser-check',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-quic', '--disable-extensions', '--disable-default-apps',
  '--disable-dev-shm-usage',
  '--disable-features=BackForwardCache,Translate,MediaRouter,OptimizationHints',
  '--disable-smooth-scrolling', '--hide-scrollbars', '--mute-audio',
  '--password-store=basic', '--headless=new', '--window-size=1280,800',
  '--remote-debugging-pipe',
  ...(process.env.EXTRA_ARGS || '').split(' ').filter(Boolean)];
if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');

const browser = await chromium.launch({
  executablePath: process.env.CHROME_PATH || '/usr/bin/chromium',
  ignoreDefaultArgs: true,
  args: [...args, 'about:blank'],
  timeout: 30000,
});
const context = browser.contexts()[0] || await browser.newContext({ viewport: null });
const page = context.pages()[0] || await context.newPage();
const cdp = await context.newCDPSession(page);
await cdp.send('Emulation.setDeviceMetricsOverride',
  { width: 1280, height: 800, deviceScaleFactor: 1, mobile: false });

const capture = (format) => cdp.send('Page.captureScreenshot', format === 'jpeg'
  ? { format, quality: 80, optimizeForSpeed: true }
  : { format, captureBeyondViewport: false, fromSurface: true, optimizeForSpeed: true });
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

console.log(`Chromium ${browser.version()}, flags: ${process.env.EXTRA_ARGS || '(the driver\'s)'}`);
console.log('| pause before the input (ms) | format | focus + insertText (ms) | capture after it (ms) |');
console.log('| ---: | --- | ---: | ---: |');
for (const pause of [0, 200]) {
  for (const format of ['png', 'jpeg']) {
    const input = [];
    const shot = [];
    for (let i = 0; i < 15; i++) {
      await page.goto(url);
      await capture('png');
      const { root } = await cdp.send('DOM.getDocument');
      const { nodeId } = await cdp.send('DOM.querySelector',
        { nodeId: root.nodeId, selector: '#username' });
      if (pause) await sleep(pause);
      const t0 = performance.now();
      await cdp.send('DOM.focus', { nodeId });
      await cdp.send('Input.insertText', { text: 'ada' });
      const t1 = performance.now();
      await capture(format);
      input.push(t1 - t0);
      shot.push(performance.now() - t1);
    }
    console.log(`| ${pause} | ${format} | ${median(input).toFixed(1)} | ${median(shot).toFixed(1)} |`);
  }
}
await browser.close();
server.close();
