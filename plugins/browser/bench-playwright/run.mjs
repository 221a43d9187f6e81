// Playwright's side of the browser driver benchmark (benches/versus.rs).
//
// Launches Chromium through playwright-core (the same binary and flags
// as the driver's launcher: CHROME_PATH, headless, 1280x800) and answers
// one JSON request per stdin line with one JSON line on stdout:
//   {"op":"goto","url":...}            -> {"ms"}
//   {"op":"observe","mode"?}          -> {"ms","chars"}   screenshot + ariaSnapshot
//                                         (mode "ai": the page's, frames included)
//   {"op":"click","sel":...}           -> {"ms"}           page.click
//   {"op":"clickSeen","sel":...}       -> {"ms","chars"}   page.click, then
//                                         screenshot + ariaSnapshot
//   {"op":"count","sel":...}           -> {"ms","count"}   locator(sel).count()
//   {"op":"clickRole","role","name"}   -> {"ms"}           getByRole(...).click()
//   {"op":"quit"}
// Times are measured here with performance.now(), around the Playwright
// call only.
import { chromium } from 'playwright-core';
import readline from 'node:readline';

const args = ['--disable-gpu', '--no-first-run', '--no-default-browser-check',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-quic', '--hide-scrollbars', '--disable-smooth-scrolling'];
if (process.getuid && process.getuid() === 0) args.push('--no-sandbox');

const browser = await chromium.launch({
  executablePath: process.env.CHROME_PATH || '/usr/bin/chromium',
  headless: true,
  args,
});
const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });

const send = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const timed = async (f) => {
  const t0 = performance.now();
  const r = await f();
  return [performance.now() - t0, r];
};

// The page's outline: the body's (the default mode), or the page's in
// `ai` mode, which includes the contents of frames.
const outline = (mode) =>
  mode === 'ai' ? page.ariaSnapshot({ mode: 'ai' }) : page.locator('body').ariaSnapshot();

send({ ready: true, version: browser.version() });
const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const req = JSON.parse(line);
  try {
    switch (req.op) {
      case 'goto': {
        const [ms] = await timed(() => page.goto(req.url, { waitUntil: 'load' }));
        send({ ms });
        break;
      }
      case 'observe': {
        const [ms, [shot, aria]] = await timed(() => Promise.all([page.screenshot(), outline(req.mode)]));
        send({ ms, png: shot.length, chars: aria.length });
        break;
      }
      case 'clickSeen': {
        const [ms, [shot, aria]] = await timed(async () => {
          await page.click(req.sel);
          return Promise.all([page.screenshot(), outline()]);
        });
        send({ ms, png: shot.length, chars: aria.length });
        break;
      }
      case 'click': {
        const [ms] = await timed(() => page.click(req.sel));
        send({ ms });
        break;
      }
      case 'count': {
        const [ms, count] = await timed(() => page.locator(req.sel).count());
        send({ ms, count });
        break;
      }
      case 'clickRole': {
        const [ms] = await timed(() => page.getByRole(req.role, { name: req.name, exact: true }).click());
        send({ ms });
        break;
      }
      case 'quit':
        await browser.close();
        send({ bye: true });
        process.exit(0);
        break;
      default:
        send({ error: `unknown op ${req.op}` });
    }
  } catch (e) {
    send({ error: String(e && e.message || e) });
  }
}
await browser.close();
