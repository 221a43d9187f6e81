// A minimal DeviceRail client in TypeScript: spawns `devicerail serve`,
// negotiates with `system.hello`, lists devices, connects, records a
// Session with one observation and shows a typed failure. Every message is typed by @devicerail-host/protocol;
// only Node's standard library runs.
//
//   DEVICERAIL_BIN=path/to/devicerail node client.mjs --plugins-dir DIR --data-dir DIR
//
// Arguments are passed to `devicerail serve`; DEVICERAIL_BIN defaults to
// `devicerail` on PATH.

import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import type {
  ErrorInfo,
  MethodName,
  Methods,
  Platform,
  RpcId,
  RpcRequest,
  RpcServerMessage,
} from "@devicerail-host/protocol";

/** The params argument: optional exactly when the request may omit it. */
type ParamsArg<M extends MethodName> = undefined extends Methods[M]["params"]
  ? [params?: Methods[M]["params"]]
  : [params: Methods[M]["params"]];

/** A JSON-RPC failure, with the protocol's structured error. */
class RpcFailed extends Error {
  constructor(
    readonly method: MethodName,
    readonly info: ErrorInfo,
  ) {
    super(`${method} failed: ${info.code}: ${info.message}`);
  }
}

type Waiter = {
  method: MethodName;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
};

/** One `devicerail serve` process spoken to over NDJSON on stdio. */
class Client {
  private nextId = 1;
  private readonly pending = new Map<RpcId, Waiter>();
  private readonly child;
  private readonly exited: Promise<number | null>;

  constructor(binary: string, serveArgs: string[]) {
    this.child = spawn(binary, ["serve", ...serveArgs], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code) => {
        for (const waiter of this.pending.values()) {
          waiter.reject(new Error(`the host exited (${code}) before answering ${waiter.method}`));
        }
        this.pending.clear();
        resolve(code);
      });
    });
    this.child.on("error", (error) => {
      console.error(`cannot start ${binary}: ${error.message}`);
      process.exit(1);
    });
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      // One JSON document per line; the types describe what the host sends.
      this.receive(JSON.parse(line) as RpcServerMessage);
    });
  }

  private receive(message: RpcServerMessage): void {
    if ("method" in message) {
      console.log(`notification ${message.method}`);
      return;
    }
    if (message.id === null) {
      console.error(`failure for an unreadable request: ${message.error?.message}`);
      return;
    }
    const waiter = this.pending.get(message.id);
    if (waiter === undefined) {
      return;
    }
    this.pending.delete(message.id);
    if (message.error !== undefined) {
      waiter.reject(new RpcFailed(waiter.method, message.error.data));
    } else {
      waiter.resolve(message.result);
    }
  }

  /** Sends one request and resolves with its typed result. */
  call<M extends MethodName>(method: M, ...[params]: ParamsArg<M>): Promise<Methods[M]["result"]> {
    const id = this.nextId++;
    const request: RpcRequest = { jsonrpc: "2.0", id, method };
    if (params !== undefined) {
      request.params = params;
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        method,
        // The host answers request `id` with the result of `method`.
        resolve: (result) => resolve(result as Methods[M]["result"]),
        reject,
      });
      this.child.stdin.write(`${JSON.stringify(request)}\n`);
    });
  }

  /** Closes stdin (the host shuts down on EOF) and waits for the exit. */
  close(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }
}

function platformName(platform: Platform): string {
  // A discriminated union: `value` exists only on the `other` variant.
  return platform.kind === "other" ? platform.value : platform.kind;
}

const deadline = setTimeout(() => {
  console.error("no answer within 60 s");
  process.exit(2);
}, 60_000);
deadline.unref();

const client = new Client(process.env.DEVICERAIL_BIN ?? "devicerail", process.argv.slice(2));
try {
  const hello = await client.call("system.hello", {
    client: { name: "typescript-client-example", version: "0.1.0" },
    protocol: { ranges: [{ major: 1, minMinor: 0, maxMinor: 5 }] },
    features: { optional: ["events.snapshot.v1"] },
  });
  const { major, minor } = hello.protocol.selected;
  console.log(`negotiated protocol ${major}.${minor} with ${hello.server.name} ${hello.server.version}`);
  console.log(`features: ${hello.features.enabled.join(", ") || "none"}`);

  const { devices } = await client.call("devices.list");
  for (const device of devices) {
    console.log(`device ${device.id}: ${device.name} (${platformName(device.platform)} ${device.osVersion})`);
  }

  const device = await client.call("device.connect");
  console.log(`connected ${device.id}`);

  const session = await client.call("session.start");
  console.log(`session ${session.id} ${session.state}`);

  const observation = await client.call("device.observe");
  const { width, height } = observation.viewport;
  console.log(`observation ${observation.id} (${width}x${height})`);

  try {
    await client.call("device.execute", { id: randomUUID(), name: "noSuchAction", arguments: {} });
  } catch (error) {
    if (!(error instanceof RpcFailed)) {
      throw error;
    }
    console.log(`device.execute failed as expected: ${error.info.code} (retryable: ${error.info.retryable})`);
  }

  const ended = await client.call("session.end", { outcome: "completed" });
  console.log(`session ${ended.id} ${ended.state} with ${ended.eventCount} events`);
  await client.call("device.disconnect");
} finally {
  console.log(`host exited with status ${await client.close()}`);
}
