// @devicerail-host/protocol 0.1.0: the message types of DeviceRail protocol 1.5 (type-only).
// Generated from schema/v1 by `cargo run -p devicerail-host-schema-gen -- write`; do not edit.

/**
 * One Action invocation.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type ActionCall = {
  /**
   * Arguments matching the Action's `inputSchema`; absent reads as `null`.
   *
   * @default null
   */
  arguments?: unknown;
  /**
   * Caller-chosen id that correlates the call with its events.
   *
   * @format uuid
   */
  id: string;
  /** The Action to run, as `device.capabilities` lists it. */
  name: string;
};

/**
 * One Action a device offers.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type ActionDefinition = {
  /** Human-readable summary of what the Action does. */
  description: string;
  /** JSON Schema of the `arguments` object. */
  inputSchema: unknown;
  /**
   * The name callers put in `ActionCall.name`; unique within the device's
   * action space.
   */
  name: string;
  /** Absent means `standard`. */
  protection?: ActionProtection | null;
};

/** How a semantic Action was carried out. */
export type ActionExecution =
  /** Through the platform's accessibility interaction. */
  | {
      mode: "nativeSemantic";
      /** The native context the element was resolved in. */
      context: UiContextRef;
    }
  /** Through the web document (DOM) itself. */
  | {
      mode: "webSemantic";
      /** The web document the element was resolved in. */
      context: UiContextRef;
    }
  /** By input at the element's coordinates. */
  | {
      mode: "coordinateFallback";
      /** The context the element was resolved in. */
      context: UiContextRef;
      /** Why semantic interaction was not used. */
      fallbackReason: CoordinateFallbackReason;
    };

/** The terminal outcome of one Action, with the four cases kept distinct. */
export type ActionOutcome =
  /** The Action completed. */
  | {
      outcome: "succeeded";
      /** The Action's result. */
      result: ActionResult;
    }
  /** The Action failed. */
  | {
      outcome: "failed";
      /** Why it failed (a driver or host error). */
      error: ErrorInfo;
    }
  /** The Action was cancelled by `request.cancel` or shutdown. */
  | {
      outcome: "cancelled";
      /** The cancellation, coded `action_cancelled`. */
      error: ErrorInfo;
    }
  /** The Action's time budget elapsed. */
  | {
      outcome: "timedOut";
      /** The timeout, coded `action_timeout`. */
      error: ErrorInfo;
      /**
       * The budget that elapsed, in milliseconds.
       *
       * @minimum 0
       * @maximum 9007199254740991
       * @format uint64
       */
      timeoutMs: number;
    };

/** How an Action's arguments are treated when recorded. */
export type ActionProtection =
  /** Arguments and screenshots are recorded. */
  | "standard"
  /**
   * Arguments are redacted and screenshots omitted; hidden unless the
   * connection negotiated `action.protected.v1`.
   */
  | "protected";

/**
 * The success result of one Action.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type ActionResult = {
  /**
   * Observation taken after the Action, or `null`.
   *
   * @default null
   */
  after?: Observation | null;
  /**
   * Observation taken before the Action, or `null`.
   *
   * @default null
   */
  before?: Observation | null;
  /**
   * The `id` of the call this result answers.
   *
   * @format uuid
   */
  callId: string;
  /**
   * Further Evidence the Action produced; absent means none.
   *
   * @default []
   */
  evidence?: AssetRef[];
  /** Set for semantic Actions. */
  execution?: ActionExecution | null;
  /**
   * When the Driver finished the Action, in Unix milliseconds.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  finishedAtMs: number;
  /** Action-specific output (semantic Actions use their result types). */
  output: unknown;
  /**
   * When the Driver started the Action, in Unix milliseconds.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  startedAtMs: number;
};

/**
 * A reference to one stored Evidence object.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type AssetRef = {
  /** Stable Evidence id; `sha256:<hex>` for content-addressed Evidence. */
  id: string;
  /** MIME type of the content, such as `image/png`. */
  mediaType: string;
  /**
   * Lower-case hex SHA-256 of the content, when content-addressed.
   *
   * @default null
   */
  sha256?: string | null;
  /**
   * Where the content lives, such as
   * `devicerail://assets/sha256/<hex>`.
   */
  uri: string;
};

/** Arguments of `clearElement`. */
export type ClearElementArguments = {
  /** The element to clear. */
  target: ElementTarget;
};

/** Result of `clearElement`. */
export type ClearElementResult = {
  /** The element cleared. */
  element: UiNodeRef;
};

/** Why a semantic Action fell back to coordinates. */
export type CoordinateFallbackReason =
  /** The element offers no semantic way to perform this interaction. */
  | "semanticInteractionUnavailable"
  /**
   * The platform or its automation interface cannot perform this
   * interaction semantically.
   */
  | "platformLimitation";

/** A complete `device.capabilities` request. */
export type DeviceCapabilitiesRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "device.capabilities";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
  /**
   * Absolute budget for the request (`request.control.v1`).
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  timeoutMs?: number | null;
};

/** Any `device.capabilities` response. */
export type DeviceCapabilitiesResponse =
  /** The request succeeded. */
  | (DeviceCapabilitiesSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `device.capabilities`: every Action the connected device offers. */
export type DeviceCapabilitiesResult = ActionDefinition[];

/** A successful `device.capabilities` response. */
export type DeviceCapabilitiesSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: ActionDefinition[];
};

/** A complete `device.connect` request. */
export type DeviceConnectRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "device.connect";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
  /**
   * Absolute budget for the request (`request.control.v1`).
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  timeoutMs?: number | null;
};

/** Any `device.connect` response. */
export type DeviceConnectResponse =
  /** The request succeeded. */
  | (DeviceConnectSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `device.connect`: the device the connection now holds. */
export type DeviceConnectResult = DeviceInfo;

/** A successful `device.connect` response. */
export type DeviceConnectSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: DeviceInfo;
};

/** A complete `device.disconnect` request. */
export type DeviceDisconnectRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "device.disconnect";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
  /**
   * Absolute budget for the request (`request.control.v1`).
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  timeoutMs?: number | null;
};

/** Any `device.disconnect` response. */
export type DeviceDisconnectResponse =
  /** The request succeeded. */
  | (DeviceDisconnectSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `device.disconnect`. */
export type DeviceDisconnectResult = {
  /** `true` once the device has been released. */
  disconnected: boolean;
};

/** A successful `device.disconnect` response. */
export type DeviceDisconnectSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: DeviceDisconnectResult;
};

/**
 * Parameters of `device.execute`: the Action fields, flat, plus an
 * optional Driver-only budget.
 */
export type DeviceExecuteParams = {
  /**
   * Starts once `actionStarted` is durable; covers Driver execution only.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  actionTimeoutMs?: number | null;
  /**
   * Arguments matching the Action's `inputSchema`; absent reads as `null`.
   *
   * @default null
   */
  arguments?: unknown;
  /**
   * Caller-chosen id that correlates the call with its events.
   *
   * @format uuid
   */
  id: string;
  /** The Action to run, as `device.capabilities` lists it. */
  name: string;
};

/** A complete `device.execute` request. */
export type DeviceExecuteRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "device.execute";
  /** The method's params object; required. */
  params: DeviceExecuteParams;
  /**
   * Absolute budget for the request (`request.control.v1`).
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  timeoutMs?: number | null;
};

/** Any `device.execute` response. */
export type DeviceExecuteResponse =
  /** The request succeeded. */
  | (DeviceExecuteSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `device.execute`: the success result of the Action. */
export type DeviceExecuteResult = ActionResult;

/** A successful `device.execute` response. */
export type DeviceExecuteSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: ActionResult;
};

/** An opaque device id assigned by the driver that reaches the device; stable across listings. */
export type DeviceId = string;

/**
 * One device a driver can reach.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type DeviceInfo = {
  /** Whether the device is connected (leased) right now. */
  connected: boolean;
  /** Driver-assigned id; `device.select` takes it. */
  id: string;
  /** Human-readable name for display only. */
  name: string;
  /**
   * The OS version when the driver knows it.
   *
   * @default null
   */
  osVersion?: string | null;
  /** The platform family. */
  platform: Platform;
};

/**
 * A device's lease: a device connected (or used by a Session) through one
 * connection belongs to that connection until it disconnects the device
 * or closes. A reserved device no connection holds shows the reservation.
 */
export type DeviceLease = {
  /** Who holds it. */
  holder: LeaseHolder;
  /**
   * When the lease (or the reservation) was taken, in Unix
   * milliseconds.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  sinceMs: number;
};

/** A complete `device.observe` request. */
export type DeviceObserveRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "device.observe";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
  /**
   * Absolute budget for the request (`request.control.v1`).
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  timeoutMs?: number | null;
};

/** Any `device.observe` response. */
export type DeviceObserveResponse =
  /** The request succeeded. */
  | (DeviceObserveSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `device.observe`: what the host saw on the device. */
export type DeviceObserveResult = Observation;

/** A successful `device.observe` response. */
export type DeviceObserveSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: Observation;
};

/** Parameters of `device.select`. */
export type DeviceSelectParams = {
  /**
   * The device this connection's later device requests go to; must be a
   * registered device.
   */
  deviceId: string;
};

/** A complete `device.select` request. */
export type DeviceSelectRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "device.select";
  /** The method's params object; required. */
  params: DeviceSelectParams;
};

/** Any `device.select` response. */
export type DeviceSelectResponse =
  /** The request succeeded. */
  | (DeviceSelectSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `device.select`. */
export type DeviceSelectResult = {
  /** The device now selected. */
  device: DeviceInfo;
};

/** A successful `device.select` response. */
export type DeviceSelectSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: DeviceSelectResult;
};

/** A complete `devices.list` request. */
export type DevicesListRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "devices.list";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `devices.list` response. */
export type DevicesListResponse =
  /** The request succeeded. */
  | (DevicesListSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `devices.list`. */
export type DevicesListResult = {
  /** Every registered device, in a stable order. */
  devices: ListedDevice[];
  /**
   * Present only when `device.routing.v1` was negotiated; then the
   * connection's selection, or `null` when nothing is selected.
   */
  selectedDeviceId?: string | null;
};

/** A successful `devices.list` response. */
export type DevicesListSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: DevicesListResult;
};

/**
 * Selects elements by accessibility fields (all channels) or CSS (web).
 * Every non-null field must match.
 */
export type ElementSelector = {
  /**
   * The context to search; `null` searches the current one.
   *
   * @default null
   */
  context?: UiContextSelector | null;
  /**
   * A CSS selector; only web contexts evaluate it.
   *
   * @minLength 1
   * @maxLength 65536
   * @default null
   */
  css?: string | null;
  /**
   * Exact developer-assigned identifier.
   *
   * @minLength 1
   * @maxLength 4096
   * @default null
   */
  identifier?: string | null;
  /**
   * Exact accessible name.
   *
   * @minLength 1
   * @maxLength 65536
   * @default null
   */
  name?: string | null;
  /**
   * Exact role.
   *
   * @minLength 1
   * @maxLength 256
   * @default null
   */
  role?: string | null;
  /**
   * Condition on the node's text, or on its name when the text does not
   * match.
   *
   * @default null
   */
  text?: TextMatch | null;
  /**
   * Exact value.
   *
   * @maxLength 65536
   * @default null
   */
  value?: string | null;
};

/**
 * What a semantic Action acts on: a selector resolved now, or a node of a
 * previous Observation.
 */
export type ElementTarget =
  /**
   * Resolve a selector against the current UI; it must match exactly
   * one element.
   */
  | {
      kind: "selector";
      /** The selector to resolve. */
      selector: ElementSelector;
    }
  /**
   * A node of an earlier Observation; refused as stale once the current
   * context, or its `documentEpoch`, differs from the node's.
   */
  | {
      kind: "node";
      /** The node to act on. */
      node: UiNodeRef;
    };

/** Structured error data (`error.data` of a failure, or nested in events). */
export type ErrorInfo = {
  /** A stable machine-readable code (see the catalog). */
  code: string;
  /**
   * Code-specific structured details, or `null`.
   *
   * @default null
   */
  details?: unknown;
  /** Human-readable text; never branch on it. */
  message: string;
  /** Whether repeating the same request may succeed. */
  retryable: boolean;
};

/**
 * The UUID of one recorded event; unique across Sessions.
 *
 * @format uuid
 */
export type EventId = string;

/**
 * A one-based position in one Session's event log; also the index of a media frame.
 *
 * @minimum 1
 * @maximum 9007199254740991
 * @format uint64
 */
export type EventSequence = number;

/** A position in one Session's log, valid only within one daemon lifetime. */
export type EventStreamCursor = {
  /**
   * The sequence of an event in that Session.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  sequence: number;
  /**
   * The Session the cursor belongs to.
   *
   * @format uuid
   */
  sessionId: string;
  /**
   * The daemon lifetime the cursor belongs to.
   *
   * @format uuid
   */
  streamEpoch: string;
};

/**
 * A short-lived, single-use WebSocket URL for one Session's event stream; a bearer secret that clients must not log.
 *
 * @minLength 1
 * @maxLength 2048
 */
export type EventStreamEndpoint = string;

/**
 * The UUID of one daemon lifetime; event-stream cursors are only valid within the epoch that issued them.
 *
 * @format uuid
 */
export type EventStreamEpoch = string;

/** Which browser `Origin` header the stream accepts. */
export type EventStreamOriginPolicy =
  /** Non-browser clients: the request must carry no `Origin`. */
  | {
      kind: "absent";
    }
  /** A browser client: `Origin` must equal this value exactly. */
  | {
      kind: "exact";
      /** The exact `Origin` value, such as `http://127.0.0.1:5173`. */
      origin: string;
    };

/**
 * The UUID of one event-stream subscription on a WebSocket connection.
 *
 * @format uuid
 */
export type EventSubscriptionId = string;

/** A complete `events.clear` request. */
export type EventsClearRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "events.clear";
  /** The params; absent means all defaults. */
  params?: SessionTargetParams | null;
};

/** Any `events.clear` response. */
export type EventsClearResponse =
  /** The request succeeded. */
  | (EventsClearSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `events.clear`. */
export type EventsClearResult = {
  /** `true`: the Session and all its events are gone. */
  deleted: boolean;
  /**
   * The Session deleted.
   *
   * @format uuid
   */
  sessionId: string;
};

/** A successful `events.clear` response. */
export type EventsClearSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: EventsClearResult;
};

/**
 * Parameters of `events.list`. Without `sessionId` the active Session is
 * read; without `limit` the whole suffix after `afterSequence`.
 */
export type EventsListParams = {
  /**
   * Return only events after this sequence; absent starts at the first
   * event.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  afterSequence?: number | null;
  /**
   * Return at most this many events (1 to 1000); absent returns the
   * whole rest of the log.
   *
   * @minimum 1
   * @maximum 1000
   * @format uint16
   */
  limit?: number | null;
  /**
   * The Session to read; absent reads the active Session.
   *
   * @format uuid
   */
  sessionId?: string | null;
};

/** A complete `events.list` request. */
export type EventsListRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "events.list";
  /** The params; absent means all defaults. */
  params?: EventsListParams | null;
};

/** Any `events.list` response. */
export type EventsListResponse =
  /** The request succeeded. */
  | (EventsListSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `events.list`: the requested events in sequence order. */
export type EventsListResult = TestEvent[];

/** A successful `events.list` response. */
export type EventsListSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: TestEvent[];
};

/** `events.stream.event`. */
export type EventsStreamEventNotification = {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** Always `events.stream.event`. */
  method: "events.stream.event";
  /** The event, its cursor and its subscription. */
  params: EventsStreamEventParams;
};

/** Params of one `events.stream.event` notification. */
export type EventsStreamEventParams = {
  /** The event's position; pass it as `afterCursor` to resume after it. */
  cursor: EventStreamCursor;
  /** The recorded event, in the same shape `events.list` returns. */
  event: TestEvent;
  /**
   * The subscription the event belongs to.
   *
   * @format uuid
   */
  subscriptionId: string;
};

/** Parameters of `events.stream.open`. */
export type EventsStreamOpenParams = {
  /** Which `Origin` header the WebSocket upgrade must carry. */
  originPolicy: EventStreamOriginPolicy;
  /**
   * The Session whose events the stream carries.
   *
   * @format uuid
   */
  sessionId: string;
};

/** A complete `events.stream.open` request. */
export type EventsStreamOpenRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "events.stream.open";
  /** The method's params object; required. */
  params: EventsStreamOpenParams;
};

/** Any `events.stream.open` response. */
export type EventsStreamOpenResponse =
  /** The request succeeded. */
  | (EventsStreamOpenSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `events.stream.open`. */
export type EventsStreamOpenResult = {
  /**
   * The single-use WebSocket URL; a bearer secret.
   *
   * @minLength 1
   * @maxLength 2048
   */
  endpoint: string;
  /**
   * When an unused endpoint stops working, in Unix milliseconds.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  expiresAtMs: number;
  /**
   * The current daemon lifetime, which every cursor of the stream carries.
   *
   * @format uuid
   */
  streamEpoch: string;
};

/** A successful `events.stream.open` response. */
export type EventsStreamOpenSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: EventsStreamOpenResult;
};

/** `events.stream.terminal`. */
export type EventsStreamTerminalNotification = {
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** Always `events.stream.terminal`. */
  method: "events.stream.terminal";
  /** Why the stream ended and how far it got. */
  params: EventsStreamTerminalParams;
};

/** Params of the one `events.stream.terminal` notification. */
export type EventsStreamTerminalParams = {
  /**
   * End of the contiguous prefix the server sent (not an acknowledgement).
   *
   * @default null
   */
  lastEmittedCursor?: EventStreamCursor | null;
  /**
   * The Session it followed.
   *
   * @format uuid
   */
  sessionId: string;
  /**
   * The subscription that ended.
   *
   * @format uuid
   */
  subscriptionId: string;
  /** Why the stream ended. */
  termination: EventsStreamTermination;
};

/** Why a stream ended: a closed set, each with its own error shape. */
export type EventsStreamTermination =
  /** The Session ended and every event was sent. */
  | {
      reason: "sessionEnded";
    }
  /** The client cancelled. */
  | {
      reason: "cancelled";
    }
  /** The client read too slowly and overflowed the bounded send queue. */
  | {
      reason: "slowConsumer";
      /** Coded `stream_slow_consumer` (retryable). */
      error: ErrorInfo;
    }
  /** The Session was deleted with `events.clear`. */
  | {
      reason: "sessionDeleted";
      /** Coded `stream_session_deleted`. */
      error: ErrorInfo;
    }
  /** The daemon is shutting down. */
  | {
      reason: "serverShutdown";
      /** Coded `stream_server_shutdown` (retryable). */
      error: ErrorInfo;
    }
  /** The server cannot send the next event without skipping one. */
  | {
      reason: "sequenceGap";
      /** Coded `stream_sequence_gap`. */
      error: ErrorInfo;
    }
  /** An event does not fit in one WebSocket message. */
  | {
      reason: "eventTooLarge";
      /** Coded `stream_event_too_large`. */
      error: ErrorInfo;
    }
  /**
   * The server failed, or an event needs a newer protocol version than
   * the one negotiated.
   */
  | {
      reason: "internalError";
      /** Coded `stream_internal_error` or `stream_event_protocol_incompatible`. */
      error: ErrorInfo;
    };

/** Parameters of `events.subscribe` (WebSocket only). */
export type EventsSubscribeParams = {
  /** Resume after this confirmed position; absent replays from the start. */
  afterCursor?: EventStreamCursor | null;
  /**
   * The Session to follow; must be the endpoint's Session.
   *
   * @format uuid
   */
  sessionId: string;
};

/** A complete `events.subscribe` request. */
export type EventsSubscribeRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "events.subscribe";
  /** The method's params object; required. */
  params: EventsSubscribeParams;
};

/** Any `events.subscribe` response. */
export type EventsSubscribeResponse =
  /** The request succeeded. */
  | (EventsSubscribeSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `events.subscribe`. */
export type EventsSubscribeResult = {
  /**
   * The last event that existed when the subscription started; replay
   * runs through it, then live events follow.
   */
  replayThrough: EventStreamCursor;
  /**
   * The Session followed.
   *
   * @format uuid
   */
  sessionId: string;
  /** Whether the Session was still active when the subscription started. */
  sessionState: SessionState;
  /**
   * Id of the new subscription; every notification carries it.
   *
   * @format uuid
   */
  subscriptionId: string;
};

/** A successful `events.subscribe` response. */
export type EventsSubscribeSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: EventsSubscribeResult;
};

/**
 * Features a client asks for: `required` ones fail the handshake when
 * unavailable, `optional` ones are enabled when available.
 */
export type FeatureOffer = {
  /**
   * Features to enable where available; unknown or unavailable names are
   * ignored. Absent means none.
   *
   * @uniqueItems
   * @default []
   */
  optional?: string[];
  /**
   * Features that must all be enabled, or the handshake fails with
   * `required_feature_unsupported`. Absent means none.
   *
   * @uniqueItems
   * @default []
   */
  required?: string[];
};

/** The complete set of features enabled on a connection. */
export type FeatureSelection = {
  /**
   * Every enabled feature, sorted by name.
   *
   * @uniqueItems
   */
  enabled: string[];
};

/** Arguments of `findElement`. */
export type FindElementArguments = {
  /** Must match exactly one element. */
  selector: ElementSelector;
};

/** Result of `findElement`. */
export type FindElementResult = {
  /** The element found. */
  element: UiNodeRef;
};

/** Parameters of `system.hello`. */
export type HelloParams = {
  /** Who is connecting. */
  client: PeerInfo;
  /**
   * The optional extensions the client asks for; absent asks for none.
   *
   * @default {"optional":[],"required":[]}
   */
  features?: FeatureOffer;
  /** The wire versions the client speaks. */
  protocol: ProtocolOffer;
};

/** Result of a successful `system.hello`. */
export type HelloResult = {
  /**
   * Id of this connection; unrelated to device, Session or lease ids.
   *
   * @format uuid
   */
  connectionId: string;
  /** The features enabled on this connection. */
  features: FeatureSelection;
  /** The negotiated version. */
  protocol: ProtocolSelection;
  /** The server's name and version. */
  server: PeerInfo;
  /** The transport this connection runs on. */
  transport: TransportInfo;
};

/** The `jsonrpc` member of every message; always the string "2.0". */
export type JsonRpcVersion = "2.0";

/** Which connection holds a device's lease, as seen by the asking one. */
export type LeaseHolder =
  /** The connection that asked. */
  | "thisConnection"
  /**
   * Another connection of the same host; it must disconnect (or close)
   * before this one can connect the device or start a Session on it.
   */
  | "anotherConnection"
  /**
   * No connection, but a reservation of the host's device pool holds
   * it: only a connection presenting the reservation's token may take
   * it (see [`crate::pool`]).
   */
  | "reservation";

/**
 * One entry of `devices.list`: the device, and its lease when one is held.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type ListedDevice = {
  /** Whether the device is connected (leased) right now. */
  connected: boolean;
  /** Driver-assigned id; `device.select` takes it. */
  id: string;
  /**
   * Present while a connection or a reservation holds the device. (An
   * extension of this host: clients that do not know it ignore it.)
   */
  lease?: DeviceLease | null;
  /** Human-readable name for display only. */
  name: string;
  /**
   * The OS version when the driver knows it.
   *
   * @default null
   */
  osVersion?: string | null;
  /** The platform family. */
  platform: Platform;
};

/** The arguments of one recorded step. */
export type ManualActionArguments =
  /** Arguments safe to store. */
  | {
      kind: "captured";
      /** The arguments, exactly as the Action was called with them. */
      value: unknown;
    }
  /**
   * A protected Action: only an opaque reference the replay host
   * resolves to the real arguments at execution time.
   */
  | {
      kind: "protected";
      /**
       * Opaque handle of 1 to 128 characters that the replay host
       * resolves; never the secret itself.
       *
       * @minLength 1
       * @maxLength 128
       */
      secretRef: string;
    };

/** One step of a recording. */
export type ManualActionStep = {
  /** The step's arguments: stored, or a reference for protected Actions. */
  arguments: ManualActionArguments;
  /**
   * The id of the original Action call.
   *
   * @format uuid
   */
  callId: string;
  /**
   * When the step was recorded, in Unix milliseconds.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  capturedAtMs: number;
  /**
   * The Action's name (1 to 128 characters).
   *
   * @minLength 1
   * @maxLength 128
   */
  name: string;
  /**
   * One-based position of the step in the recording.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  sequence: number;
};

/**
 * A driver-neutral recording of human-selected Actions, tied to the
 * digest of the action space it was made against.
 */
export type ManualRecording = {
  /**
   * Hex SHA-256 of the canonical action space.
   *
   * @minLength 64
   * @maxLength 64
   */
  actionSpaceSha256: string;
  /**
   * When recording ended, in Unix milliseconds.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  endedAtMs: number;
  /**
   * Version of this document format; currently 1.
   *
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  formatVersion: number;
  /**
   * Unique id of the recording.
   *
   * @format uuid
   */
  recordingId: string;
  /** The device the steps were recorded on. */
  sourceDeviceId: string;
  /**
   * When recording started, in Unix milliseconds.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  startedAtMs: number;
  /**
   * The steps in replay order; at most 10,000.
   *
   * @maxItems 10000
   */
  steps: ManualActionStep[];
};

/** One captured frame. */
export type MediaFrame = {
  /**
   * How long the frame is shown, in milliseconds; every `video` frame
   * has one.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  durationMs?: number | null;
  /** The frame's screenshot Evidence (stored PNG bytes). */
  evidence: AssetRef;
  /**
   * One-based, without gaps.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  frameIndex: number;
  /** `true` for a key frame; absent means `false`. */
  keyFrame?: boolean;
  /**
   * The stream the frame belongs to.
   *
   * @format uuid
   */
  streamId: string;
};

/**
 * Parameters of `media.stream.capture`. Retrying the last accepted
 * `frameIndex` returns the same frame.
 */
export type MediaStreamCaptureParams = {
  /**
   * Required (and positive) for `video` streams.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  durationMs?: number | null;
  /**
   * One-based index of the frame: the next index, or the last accepted
   * one to retry it.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  frameIndex: number;
  /**
   * The open stream to capture into.
   *
   * @format uuid
   */
  streamId: string;
};

/** A complete `media.stream.capture` request. */
export type MediaStreamCaptureRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "media.stream.capture";
  /** The method's params object; required. */
  params: MediaStreamCaptureParams;
  /**
   * Absolute budget for the request (`request.control.v1`).
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  timeoutMs?: number | null;
};

/** Any `media.stream.capture` response. */
export type MediaStreamCaptureResponse =
  /** The request succeeded. */
  | (MediaStreamCaptureSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `media.stream.capture`. */
export type MediaStreamCaptureResult = {
  /** The captured frame (on a retry, the frame captured before). */
  frame: MediaFrame;
};

/** A successful `media.stream.capture` response. */
export type MediaStreamCaptureSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: MediaStreamCaptureResult;
};

/** Parameters of `media.stream.end`. */
export type MediaStreamEndParams = {
  /**
   * The open stream to close.
   *
   * @format uuid
   */
  streamId: string;
};

/** A complete `media.stream.end` request. */
export type MediaStreamEndRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "media.stream.end";
  /** The method's params object; required. */
  params: MediaStreamEndParams;
};

/** Any `media.stream.end` response. */
export type MediaStreamEndResponse =
  /** The request succeeded. */
  | (MediaStreamEndSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `media.stream.end`. */
export type MediaStreamEndResult = {
  /**
   * How many frames the stream captured.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  frameCount: number;
  /**
   * The closed stream.
   *
   * @format uuid
   */
  streamId: string;
};

/** A successful `media.stream.end` response. */
export type MediaStreamEndSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: MediaStreamEndResult;
};

/**
 * The UUID a caller picks for one media stream; unique for the daemon's lifetime.
 *
 * @format uuid
 */
export type MediaStreamId = string;

/** One media stream. */
export type MediaStreamInfo = {
  /**
   * The caller-chosen stream id.
   *
   * @format uuid
   */
  id: string;
  /** Whether frames are screenshots or timed video frames. */
  kind: MediaStreamKind;
  /**
   * Chosen by the host from the device's producer.
   *
   * @minLength 1
   * @maxLength 255
   */
  mediaType: string;
  /** The device's screen when the stream started; absent when unknown. */
  viewport?: Viewport | null;
};

/** What a stream's frames are. */
export type MediaStreamKind =
  /** Independent screenshots. */
  | "screenshot"
  /** A timed sequence of independent PNG key frames (not a container). */
  | "video";

/** Parameters of `media.stream.start`. */
export type MediaStreamStartParams = {
  /** The kind of frames to capture. */
  kind: MediaStreamKind;
  /**
   * A new id, never used before in this daemon's lifetime.
   *
   * @format uuid
   */
  streamId: string;
};

/** A complete `media.stream.start` request. */
export type MediaStreamStartRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "media.stream.start";
  /** The method's params object; required. */
  params: MediaStreamStartParams;
};

/** Any `media.stream.start` response. */
export type MediaStreamStartResponse =
  /** The request succeeded. */
  | (MediaStreamStartSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `media.stream.start`. */
export type MediaStreamStartResult = {
  /** The opened stream, with the media type the host chose. */
  stream: MediaStreamInfo;
};

/** A successful `media.stream.start` response. */
export type MediaStreamStartSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: MediaStreamStartResult;
};

export type NoParams = { [key: string]: never } | [];

/**
 * What the host saw on a device at one instant.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type Observation = {
  /**
   * When the Observation was captured, in Unix milliseconds.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  capturedAtMs: number;
  /** The device observed. */
  deviceId: string;
  /**
   * Unique id of the Observation; `ui.snapshot.get` takes it.
   *
   * @format uuid
   */
  id: string;
  /**
   * Driver metadata (orientation, URL, title, ...).
   *
   * @default {}
   */
  metadata?: { [key: string]: unknown };
  /**
   * The screenshot Evidence, or `null`.
   *
   * @default null
   */
  screenshot?: AssetRef | null;
  /** Set exactly when `screenshot` was deliberately omitted. */
  screenshotOmission?: ScreenshotOmissionReason | null;
  /** The UI snapshot reference, when one was captured. */
  uiSnapshot?: UiSnapshotRef | null;
  /** Set when a UI snapshot was wanted but omitted. */
  uiSnapshotOmission?: UiSnapshotOmissionReason | null;
  /** The screen's size and scale at capture time. */
  viewport: Viewport;
};

/** Name and version of one peer (client or server). */
export type PeerInfo = {
  /** Product name, such as `devicerail-host`. */
  name: string;
  /** The peer's own software version (not a wire version). */
  version: string;
};

/**
 * The platform family of a device.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type Platform =
  /** A page in a web browser. */
  | {
      kind: "web";
    }
  /** An Android phone, tablet or emulator. */
  | {
      kind: "android";
    }
  /** An iPhone or iPad, or an iOS simulator. */
  | {
      kind: "ios";
    }
  /** A HarmonyOS device. */
  | {
      kind: "harmonyOs";
    }
  /** A macOS desktop. */
  | {
      kind: "macOs";
    }
  /** A Windows desktop. */
  | {
      kind: "windows";
    }
  /** A Linux desktop. */
  | {
      kind: "linux";
    }
  /** A remote desktop reached over RDP. */
  | {
      kind: "rdp";
    }
  /** A simulated device for tests and demos. */
  | {
      kind: "mock";
    }
  /** A platform outside the list, named by `value`. */
  | {
      kind: "other";
      /** The platform's name as the driver reports it. */
      value: string;
    };

/** Why version negotiation found no common version. */
export type ProtocolIncompatibilityReason =
  /** Every version the client offers is older than every server version. */
  | "clientTooOld"
  /** Every version the client offers is newer than every server version. */
  | "serverTooOld"
  /** The offers interleave without overlapping. */
  | "noCommonVersion";

/**
 * The version ranges one side supports. Majors are listed explicitly, so
 * offering 1 and 3 says nothing about 2.
 */
export type ProtocolOffer = {
  /**
   * At least one range; their order carries no meaning.
   *
   * @minItems 1
   */
  ranges: ProtocolRange[];
};

/** The minor versions `minMinor..=maxMinor` of one major version. */
export type ProtocolRange = {
  /**
   * The major version the range belongs to.
   *
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  major: number;
  /**
   * Highest supported minor, inclusive; must not be below `minMinor`.
   *
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  maxMinor: number;
  /**
   * Lowest supported minor, inclusive.
   *
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  minMinor: number;
};

/** The negotiated version. */
export type ProtocolSelection = {
  /** The version both sides speak from now on. */
  selected: ProtocolVersion;
};

/** One wire version. */
export type ProtocolVersion = {
  /**
   * Major version; different majors never interoperate.
   *
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  major: number;
  /**
   * Minor version within `major`.
   *
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  minor: number;
};

/**
 * An Action invocation as recorded in events. Protected and unknown
 * Actions keep only correlation fields: `arguments` is `null` and
 * `argumentsRedacted` is true.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type RecordedActionCall = {
  /**
   * The arguments as called; `null` when redacted.
   *
   * @default null
   */
  arguments?: unknown;
  /** `true` when the arguments were withheld; absent means `false`. */
  argumentsRedacted?: boolean;
  /**
   * The call's id.
   *
   * @format uuid
   */
  id: string;
  /** The Action's name. */
  name: string;
};

/** Parameters of `request.cancel`. */
export type RequestCancelParams = {
  /**
   * The `id` of the in-flight request to cancel; never the id of this
   * cancel request itself.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  requestId: string | number;
};

/** A complete `request.cancel` request. */
export type RequestCancelRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "request.cancel";
  /** The method's params object; required. */
  params: RequestCancelParams;
};

/** Any `request.cancel` response. */
export type RequestCancelResponse =
  /** The request succeeded. */
  | (RequestCancelSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `request.cancel`. */
export type RequestCancelResult = {
  /**
   * The target request's id, as given in the params.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  requestId: string | number;
  /** What the cancel request did. */
  status: RequestCancelStatus;
};

/** The outcome of one cancel request. */
export type RequestCancelStatus =
  /** The target was in flight and is now cancelled. */
  | "requested"
  /** The target had already been cancelled. */
  | "alreadyRequested"
  /** No cancellable request has this id (finished or never existed). */
  | "notFound";

/** A successful `request.cancel` response. */
export type RequestCancelSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: RequestCancelResult;
};

/**
 * A positive budget in milliseconds for request-scoped device work (`timeoutMs`, `actionTimeoutMs`).
 *
 * @minimum 1
 * @maximum 9007199254740991
 * @format uint64
 */
export type RequestTimeoutMs = number;

/** The `error` member of a JSON-RPC failure response. */
export type RpcError = {
  /**
   * JSON-RPC numeric code.
   *
   * @minimum -2147483648
   * @maximum 2147483647
   * @format int32
   */
  code: number;
  /** The DeviceRail error data clients branch on. */
  data: ErrorInfo;
  /** The same text as `data.message`. */
  message: string;
};

/** A failure response. `id` is `null` when the request's id was unreadable. */
export type RpcFailure = {
  /** The JSON-RPC error, with DeviceRail's structured `data`. */
  error: RpcError;
  /** Always present; `null` only when the request's id was unreadable. */
  id: string | number | null;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
};

/**
 * A request id chosen by the client: a string, or a non-negative integer no larger than 2^53 - 1.
 *
 * @minimum 0 (integer)
 * @maximum 9007199254740991 (integer)
 * @format uint64 (integer)
 */
export type RpcId = string | number;

/** Request parameters: an object or an array. */
export type RpcParams = { [key: string]: unknown } | unknown[];

/** A request as it arrives, before its method is dispatched. */
export type RpcRequest = {
  /**
   * Chosen by the client to match the response to the request; must not
   * equal the id of a request still awaiting its response.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name, such as `device.observe`. */
  method: string;
  /** The method's params; absent for methods that take none. */
  params?: RpcParams | null;
  /**
   * Absolute budget for request-scoped device work (`request.control.v1`).
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  timeoutMs?: number | null;
};

/** Any response. */
export type RpcResponse =
  /** The request succeeded. */
  | (RpcSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Anything a server sends. */
export type RpcServerMessage = RpcResponse | RpcServerNotification;

/** The two notifications a server sends. */
export type RpcServerNotification =
  /** One replayed or live event. */
  | EventsStreamEventNotification
  /** The last message of a stream. */
  | EventsStreamTerminalNotification;

/** A success response carrying a result of type `R`. */
export type RpcSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: unknown;
};

/** Why an Observation or Action carries no screenshot. */
export type ScreenshotOmissionReason =
  /** The host's screenshot policy is `omit`. */
  | "policy"
  /** The Observation belongs to a protected or unknown Action. */
  | "protectedAction";

/** A complete `session.current` request. */
export type SessionCurrentRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "session.current";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `session.current` response. */
export type SessionCurrentResponse =
  /** The request succeeded. */
  | (SessionCurrentSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `session.current`. */
export type SessionCurrentResult = {
  /**
   * The connection's active Session.
   *
   * @format uuid
   */
  sessionId: string;
};

/** A successful `session.current` response. */
export type SessionCurrentSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: SessionCurrentResult;
};

/** Parameters of `session.end`. */
export type SessionEndParams = {
  /** Defaults to `completed`. */
  outcome?: SessionOutcome | null;
  /** Free text stored in the `sessionEnded` event; absent for none. */
  reason?: string | null;
};

/** A complete `session.end` request. */
export type SessionEndRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "session.end";
  /** The params; absent means all defaults. */
  params?: SessionEndParams | null;
};

/** Any `session.end` response. */
export type SessionEndResponse =
  /** The request succeeded. */
  | (SessionEndSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `session.end`: the Session as it ended. */
export type SessionEndResult = SessionInfo;

/** A successful `session.end` response. */
export type SessionEndSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: SessionInfo;
};

/** A complete Session document (the legacy export shape). */
export type SessionExport = {
  /** Every event of the Session, in sequence order. */
  events: TestEvent[];
  /** The Session's summary. */
  session: SessionInfo;
};

/**
 * Parameters of `session.export`. Neither cursor field: the legacy
 * complete export. `limit` (with optional `afterSequence`): one page of an
 * ended Session, which needs `session.export.page.v1`.
 */
export type SessionExportParams = {
  /**
   * Page start: only events after this sequence. Valid only together
   * with `limit`.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  afterSequence?: number | null;
  /**
   * Page size (1 to 1000). Asks for a page, which needs
   * `session.export.page.v1` and an ended Session.
   *
   * @minimum 1
   * @maximum 1000
   * @format uint16
   */
  limit?: number | null;
  /**
   * The Session to export; absent exports the active Session.
   *
   * @format uuid
   */
  sessionId?: string | null;
};

/** A complete `session.export` request. */
export type SessionExportRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "session.export";
  /** The params; absent means all defaults. */
  params?: SessionExportParams | null;
};

/** Any `session.export` response. */
export type SessionExportResponse =
  /** The request succeeded. */
  | (SessionExportSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/**
 * Result of `session.export`. `nextAfterSequence` is present only on a
 * page that is not the last.
 */
export type SessionExportResult = {
  /** The whole log, or one page of it, in sequence order. */
  events: TestEvent[];
  /**
   * The `afterSequence` of the next page; absent on the last page and
   * on complete exports.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  nextAfterSequence?: number | null;
  /** The Session's summary. */
  session: SessionInfo;
};

/** A successful `session.export` response. */
export type SessionExportSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: SessionExportResult;
};

/**
 * The UUID of one recorded Session.
 *
 * @format uuid
 */
export type SessionId = string;

/** Summary of one Session. */
export type SessionInfo = {
  /**
   * When the Session ended, in Unix milliseconds; `null` while active.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   * @default null
   */
  endedAtMs?: number | null;
  /**
   * How many events the log holds; at least 1 (`sessionStarted`).
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  eventCount: number;
  /**
   * The Session's id.
   *
   * @format uuid
   */
  id: string;
  /**
   * Sequence of the newest event. Logs have no gaps, so this equals
   * `eventCount`.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  lastSequence: number;
  /**
   * When the Session started, in Unix milliseconds.
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  startedAtMs: number;
  /** Whether the Session still accepts events. */
  state: SessionState;
};

/** How a Session ended. */
export type SessionOutcome =
  /** Ended normally (what `session.end` uses by default). */
  | "completed"
  /** The caller reports that the run failed. */
  | "failed"
  /** The caller abandoned the run. */
  | "cancelled"
  /** The host shut down (or crashed) while the Session was active. */
  | "shutdown";

/** A complete `session.start` request. */
export type SessionStartRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "session.start";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `session.start` response. */
export type SessionStartResponse =
  /** The request succeeded. */
  | (SessionStartSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `session.start`: the Session just started. */
export type SessionStartResult = SessionInfo;

/** A successful `session.start` response. */
export type SessionStartSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: SessionInfo;
};

/** Whether a Session still accepts events. */
export type SessionState =
  /** Still recording: accepts new events. */
  | "active"
  /** Sealed by its `sessionEnded` event; read-only. */
  | "ended";

/** Parameters of `events.clear` (Session deletion). */
export type SessionTargetParams = {
  /**
   * The Session to delete; absent means the active Session, which is
   * refused (only ended Sessions can be deleted).
   *
   * @format uuid
   */
  sessionId?: string | null;
};

/** A complete `sessions.list` request. */
export type SessionsListRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "sessions.list";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `sessions.list` response. */
export type SessionsListResponse =
  /** The request succeeded. */
  | (SessionsListSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `sessions.list`: every Session the host has recorded. */
export type SessionsListResult = SessionInfo[];

/** A successful `sessions.list` response. */
export type SessionsListSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: SessionInfo[];
};

/** Arguments of `setElementValue`. */
export type SetElementValueArguments = {
  /** The element to set. */
  target: ElementTarget;
  /**
   * The new value; may be empty.
   *
   * @maxLength 65536
   */
  value: string;
};

/** Result of `setElementValue`. */
export type SetElementValueResult = {
  /** The element set. */
  element: UiNodeRef;
};

/** A complete `system.describe` request. */
export type SystemDescribeRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "system.describe";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `system.describe` response. */
export type SystemDescribeResponse =
  /** The request succeeded. */
  | (SystemDescribeSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `system.describe`: the negotiated connection and its state. */
export type SystemDescribeResult = {
  /**
   * The connection's active Session, if any.
   *
   * @format uuid
   * @default null
   */
  activeSessionId?: string | null;
  /** The client as it introduced itself in `system.hello`. */
  client: PeerInfo;
  /** What `system.hello` returned on this connection. */
  connection: HelloResult;
  /**
   * The device this connection routes to, if any.
   *
   * @default null
   */
  deviceId?: string | null;
};

/** A successful `system.describe` response. */
export type SystemDescribeSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: SystemDescribeResult;
};

/** A complete `system.hello` request. */
export type SystemHelloRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "system.hello";
  /** The method's params object; required. */
  params: HelloParams;
};

/** Any `system.hello` response. */
export type SystemHelloResponse =
  /** The request succeeded. */
  | (SystemHelloSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** A successful `system.hello` response. */
export type SystemHelloSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: HelloResult;
};

/** Arguments of `tapElement`. */
export type TapElementArguments = {
  /** The element to tap. */
  target: ElementTarget;
};

/** Result of `tapElement`. */
export type TapElementResult = {
  /** The element tapped. */
  element: UiNodeRef;
};

/**
 * One fact in a Session's log. `sequence` orders the log; `atMs` is
 * informational.
 */
export type TestEvent = {
  /**
   * When the event was recorded, in Unix milliseconds; informational only
   * (order by `sequence`).
   *
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  atMs: number;
  /** The device the event concerns, if any. */
  deviceId?: string | null;
  /**
   * Globally unique id of this event.
   *
   * @format uuid
   */
  eventId: string;
  /** What happened, tagged by `type`. */
  payload: TestEventPayload;
  /** The RPC request that produced the event, if any. */
  requestId?: string | number | null;
  /**
   * One-based position in the Session's log, without gaps; the authority
   * for ordering and replay.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  sequence: number;
  /**
   * The Session whose log holds the event.
   *
   * @format uuid
   */
  sessionId: string;
};

/** What happened. */
export type TestEventPayload =
  /** First event of every Session (sequence 1). */
  | {
      type: "sessionStarted";
    }
  /** Last event of a Session; the log is sealed after it. */
  | {
      type: "sessionEnded";
      /** How the Session ended. */
      outcome: SessionOutcome;
      /**
       * The caller's free-text reason, or `null`.
       *
       * @default null
       */
      reason?: string | null;
    }
  /** The host captured an Observation. */
  | {
      type: "observationCaptured";
      /** The Observation captured. */
      observation: Observation;
    }
  /** An Action started executing on the device. */
  | {
      type: "actionStarted";
      /** The call; arguments are redacted for protected and unknown Actions. */
      call: RecordedActionCall;
    }
  /** An Action reached its terminal outcome. */
  | {
      type: "actionCompleted";
      /**
       * The `id` of the call its `actionStarted` event recorded.
       *
       * @format uuid
       */
      callId: string;
      /** How the Action ended. */
      outcome: ActionOutcome;
    }
  /** A media stream was opened (protocol 1.4). */
  | {
      type: "mediaStreamStarted";
      /** The stream opened. */
      stream: MediaStreamInfo;
    }
  /** One frame of an open media stream was captured (protocol 1.4). */
  | {
      type: "mediaFrameCaptured";
      /** The frame captured. */
      frame: MediaFrame;
    }
  /** A media stream was closed (protocol 1.4). */
  | {
      type: "mediaStreamEnded";
      /**
       * How many frames the stream holds.
       *
       * @minimum 0
       * @maximum 9007199254740991
       * @format uint64
       */
      frameCount: number;
      /**
       * The stream closed.
       *
       * @format uuid
       */
      streamId: string;
    }
  /** The caller recorded a verdict (protocol 1.5). */
  | {
      type: "verdictRecorded";
      /** The verdict, exactly as recorded. */
      verdict: Verdict;
    }
  /** A failure recorded in the log that belongs to no Action. */
  | {
      type: "error";
      /** What failed. */
      error: ErrorInfo;
    };

/** A text condition of a selector. */
export type TextMatch = {
  /** Case-insensitive unless set. */
  caseSensitive?: boolean;
  /**
   * Whole-text or substring comparison; absent means `exact`.
   *
   * @default "exact"
   */
  mode?: TextMatchMode;
  /**
   * The text to look for; never empty.
   *
   * @minLength 1
   * @maxLength 65536
   */
  value: string;
};

/** How selector text is compared. */
export type TextMatchMode =
  /** The whole text equals the value. */
  | "exact"
  /** The text contains the value. */
  | "contains";

/** The transport a connection runs on. */
export type TransportInfo = {
  /** `ndjson` or `jsonMessage`. */
  framing: string;
  /** `stdio`, `unix` or `webSocket`. */
  kind: string;
};

/** The channel a UI context belongs to. */
export type UiContextKind =
  /** Platform accessibility tree. */
  | "native"
  /** A web document. */
  | "web";

/**
 * The full identity of one UI context. `documentEpoch` changes whenever
 * earlier node references stop being valid (navigation, reconnect, ...).
 */
export type UiContextRef = {
  /**
   * Which context of that kind, such as one app or one browser page.
   *
   * @minLength 1
   * @maxLength 4096
   */
  contextId: string;
  /** Native accessibility tree or web document. */
  contextKind: UiContextKind;
  /**
   * Changes whenever node references into the context go stale.
   *
   * @minLength 1
   * @maxLength 4096
   */
  documentEpoch: string;
};

/** Picks a current context by kind and optionally id (never by epoch). */
export type UiContextSelector = {
  /**
   * A specific context; `null` picks the current one of that kind.
   *
   * @minLength 1
   * @maxLength 4096
   * @default null
   */
  contextId?: string | null;
  /** The kind of context to pick. */
  contextKind: UiContextKind;
};

/**
 * One node of the normalized tree. Unknown values stay `null`: drivers
 * never guess `enabled` or `hittable`.
 */
export type UiNode = {
  /**
   * Frame in screenshot pixels; `null` when unknown.
   *
   * @default null
   */
  bounds?: UiRect | null;
  /**
   * Whether the node accepts interaction; `null` when the platform does
   * not say.
   *
   * @default null
   */
  enabled?: boolean | null;
  /**
   * Whether a tap at the node's position would reach it; `null` when the
   * platform does not say.
   *
   * @default null
   */
  hittable?: boolean | null;
  /**
   * Developer-assigned id (resource id, accessibility identifier, DOM id
   * or test id); `null` when there is none.
   *
   * @maxLength 4096
   * @default null
   */
  identifier?: string | null;
  /**
   * Accessible name (the label); `null` when there is none.
   *
   * @maxLength 65536
   * @default null
   */
  name?: string | null;
  /**
   * The parent's id; `null` for a root.
   *
   * @minLength 1
   * @maxLength 4096
   * @default null
   */
  parentStableNodeId?: string | null;
  /**
   * Normalized role, such as `button`.
   *
   * @minLength 1
   * @maxLength 256
   */
  role: string;
  /**
   * The node's id: unique in the snapshot, stable while the context's
   * `documentEpoch` stays the same.
   *
   * @minLength 1
   * @maxLength 4096
   */
  stableNodeId: string;
  /**
   * Visible text; `null` when there is none.
   *
   * @maxLength 65536
   * @default null
   */
  text?: string | null;
  /**
   * Current value, such as a text field's content; `null` when there is
   * none.
   *
   * @maxLength 65536
   * @default null
   */
  value?: string | null;
};

/** A durable reference to one node of one observed tree. */
export type UiNodeRef = {
  /** The node's full context, epoch included. */
  context: UiContextRef;
  /**
   * The Observation whose tree holds the node.
   *
   * @format uuid
   */
  observationId: string;
  /**
   * The node's id in that tree.
   *
   * @minLength 1
   * @maxLength 4096
   */
  stableNodeId: string;
};

/** A rectangle in screenshot pixels (the space of `Viewport.width`/`height`). */
export type UiRect = {
  /**
   * Height in screenshot pixels; never negative.
   *
   * @minimum 0.0
   * @format double
   */
  height: number;
  /**
   * Width in screenshot pixels; never negative.
   *
   * @minimum 0.0
   * @format double
   */
  width: number;
  /**
   * Left edge, in screenshot pixels.
   *
   * @format double
   */
  x: number;
  /**
   * Top edge, in screenshot pixels.
   *
   * @format double
   */
  y: number;
};

/**
 * A whole UI tree: `nodes` in preorder, each parent before its
 * descendants, at most 768 KiB serialized.
 */
export type UiSnapshot = {
  /** The context the tree describes. */
  context: UiContextRef;
  /**
   * Tree format version; always 1.
   *
   * @minimum 1
   * @maximum 1
   * @format uint16
   */
  formatVersion: number;
  /**
   * Every node, in preorder (1 to 10,000).
   *
   * @minItems 1
   * @maxItems 10000
   */
  nodes: UiNode[];
  /**
   * The Observation the tree was captured with.
   *
   * @format uuid
   */
  observationId: string;
  /**
   * Ids of exactly the parentless nodes.
   *
   * @minItems 1
   * @maxItems 10000
   */
  rootStableNodeIds: string[];
};

/** Parameters of `ui.snapshot.get`. */
export type UiSnapshotGetParams = {
  /**
   * An Observation of the active Session that has a UI snapshot.
   *
   * @format uuid
   */
  observationId: string;
};

/** A complete `ui.snapshot.get` request. */
export type UiSnapshotGetRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "ui.snapshot.get";
  /** The method's params object; required. */
  params: UiSnapshotGetParams;
};

/** Any `ui.snapshot.get` response. */
export type UiSnapshotGetResponse =
  /** The request succeeded. */
  | (UiSnapshotGetSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `ui.snapshot.get`: the stored UI tree of one Observation. */
export type UiSnapshotGetResult = UiSnapshot;

/** A successful `ui.snapshot.get` response. */
export type UiSnapshotGetSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: UiSnapshot;
};

/** Why an Observation carries no UI snapshot. */
export type UiSnapshotOmissionReason =
  /** The driver cannot produce UI trees. */
  | "driverUnsupported"
  /** Policy disabled UI capture. */
  | "policy"
  /** The Observation belongs to a protected or unknown Action. */
  | "protectedAction";

/** The small reference an Observation carries to its stored UI tree. */
export type UiSnapshotRef = {
  /**
   * Serialized size of the tree in bytes (at most 768 KiB).
   *
   * @minimum 1
   * @maximum 786432
   * @format uint32
   */
  byteLength: number;
  /** The context the tree describes. */
  context: UiContextRef;
  /**
   * The stored tree, of media type
   * `application/vnd.devicerail.ui-tree+json;version=1`.
   */
  evidence: AssetRef;
  /**
   * Tree format version; always 1.
   *
   * @minimum 1
   * @maximum 1
   * @format uint16
   */
  formatVersion: number;
  /**
   * How many nodes the tree has (1 to 10,000).
   *
   * @minimum 1
   * @maximum 10000
   * @format uint16
   */
  nodeCount: number;
};

/** A verdict with the Evidence it rests on (all from the active Session). */
export type Verdict = {
  /**
   * Evidence the verdict cites (at most 64), each reachable from the
   * active Session; absent means none.
   *
   * @maxItems 64
   * @default []
   */
  evidence?: AssetRef[];
  /** The caller's judgement; the host never changes it. */
  status: VerdictStatus;
  /**
   * Free-text explanation (1 to 16,384 characters).
   *
   * @minLength 1
   * @maxLength 16384
   */
  summary: string;
};

/** Parameters of `verdict.record`. */
export type VerdictRecordParams = {
  /** The verdict to store, as given. */
  verdict: Verdict;
};

/** A complete `verdict.record` request. */
export type VerdictRecordRequest = {
  /**
   * Chosen by the client to match the response to the request.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method name. */
  method: "verdict.record";
  /** The method's params object; required. */
  params: VerdictRecordParams;
};

/** Any `verdict.record` response. */
export type VerdictRecordResponse =
  /** The request succeeded. */
  | (VerdictRecordSuccess & { error?: never })
  /** The request failed. */
  | (RpcFailure & { result?: never });

/** Result of `verdict.record`: the durable event. */
export type VerdictRecordResult = {
  /** The `verdictRecorded` event appended to the active Session. */
  event: TestEvent;
};

/** A successful `verdict.record` response. */
export type VerdictRecordSuccess = {
  /**
   * The id of the request answered.
   *
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  /** Always `"2.0"`. */
  jsonrpc: "2.0";
  /** The method's result. */
  result: VerdictRecordResult;
};

/** The caller's judgement. */
export type VerdictStatus =
  /** The caller judged the run a success. */
  | "pass"
  /** The caller judged the run a failure. */
  | "fail"
  /** The caller could not decide. */
  | "unknown";

/**
 * The device's logical screen.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type Viewport = {
  /**
   * Height in physical pixels.
   *
   * @minimum 0
   * @maximum 4294967295
   * @format uint32
   */
  height: number;
  /**
   * Physical pixels per logical point.
   *
   * @format double
   */
  scaleFactor: number;
  /**
   * Width in physical pixels.
   *
   * @minimum 0
   * @maximum 4294967295
   * @format uint32
   */
  width: number;
};

/**
 * Arguments of `waitForElement`. The wait is bounded by the request's
 * deadlines (`timeoutMs`/`actionTimeoutMs`).
 */
export type WaitForElementArguments = {
  /**
   * What to wait for; absent means `present`.
   *
   * @default "present"
   */
  condition?: WaitForElementCondition;
  /** The element to wait for. */
  selector: ElementSelector;
};

/** The state `waitForElement` waits for. */
export type WaitForElementCondition =
  /** An element matches. */
  | "present"
  /** A matching element is visible in the viewport. */
  | "visible"
  /** A matching element is not disabled. */
  | "enabled"
  /** No element matches. */
  | "absent";

/** Result of `waitForElement`. */
export type WaitForElementResult = {
  /** The condition waited for. */
  condition: WaitForElementCondition;
  /**
   * The matching node (`null` for `absent`).
   *
   * @default null
   */
  element?: UiNodeRef | null;
  /** Whether the condition held before the wait gave up. */
  matched: boolean;
};

/**
 * Every method by name: its `params` (optional when a request may omit them), its
 * `result`, and its complete `request` and `response` messages.
 */
export type Methods = {
  "system.hello": {
    params: HelloParams;
    result: HelloResult;
    request: SystemHelloRequest;
    response: SystemHelloResponse;
  };
  "system.describe": {
    params?: NoParams | null;
    result: SystemDescribeResult;
    request: SystemDescribeRequest;
    response: SystemDescribeResponse;
  };
  "devices.list": {
    params?: NoParams | null;
    result: DevicesListResult;
    request: DevicesListRequest;
    response: DevicesListResponse;
  };
  "device.select": {
    params: DeviceSelectParams;
    result: DeviceSelectResult;
    request: DeviceSelectRequest;
    response: DeviceSelectResponse;
  };
  "device.connect": {
    params?: NoParams | null;
    result: DeviceInfo;
    request: DeviceConnectRequest;
    response: DeviceConnectResponse;
  };
  "device.disconnect": {
    params?: NoParams | null;
    result: DeviceDisconnectResult;
    request: DeviceDisconnectRequest;
    response: DeviceDisconnectResponse;
  };
  "device.capabilities": {
    params?: NoParams | null;
    result: ActionDefinition[];
    request: DeviceCapabilitiesRequest;
    response: DeviceCapabilitiesResponse;
  };
  "device.observe": {
    params?: NoParams | null;
    result: Observation;
    request: DeviceObserveRequest;
    response: DeviceObserveResponse;
  };
  "device.execute": {
    params: DeviceExecuteParams;
    result: ActionResult;
    request: DeviceExecuteRequest;
    response: DeviceExecuteResponse;
  };
  "request.cancel": {
    params: RequestCancelParams;
    result: RequestCancelResult;
    request: RequestCancelRequest;
    response: RequestCancelResponse;
  };
  "session.start": {
    params?: NoParams | null;
    result: SessionInfo;
    request: SessionStartRequest;
    response: SessionStartResponse;
  };
  "session.current": {
    params?: NoParams | null;
    result: SessionCurrentResult;
    request: SessionCurrentRequest;
    response: SessionCurrentResponse;
  };
  "session.end": {
    params?: SessionEndParams | null;
    result: SessionInfo;
    request: SessionEndRequest;
    response: SessionEndResponse;
  };
  "sessions.list": {
    params?: NoParams | null;
    result: SessionInfo[];
    request: SessionsListRequest;
    response: SessionsListResponse;
  };
  "session.export": {
    params?: SessionExportParams | null;
    result: SessionExportResult;
    request: SessionExportRequest;
    response: SessionExportResponse;
  };
  "events.list": {
    params?: EventsListParams | null;
    result: TestEvent[];
    request: EventsListRequest;
    response: EventsListResponse;
  };
  "events.clear": {
    params?: SessionTargetParams | null;
    result: EventsClearResult;
    request: EventsClearRequest;
    response: EventsClearResponse;
  };
  "events.stream.open": {
    params: EventsStreamOpenParams;
    result: EventsStreamOpenResult;
    request: EventsStreamOpenRequest;
    response: EventsStreamOpenResponse;
  };
  "events.subscribe": {
    params: EventsSubscribeParams;
    result: EventsSubscribeResult;
    request: EventsSubscribeRequest;
    response: EventsSubscribeResponse;
  };
  "media.stream.start": {
    params: MediaStreamStartParams;
    result: MediaStreamStartResult;
    request: MediaStreamStartRequest;
    response: MediaStreamStartResponse;
  };
  "media.stream.capture": {
    params: MediaStreamCaptureParams;
    result: MediaStreamCaptureResult;
    request: MediaStreamCaptureRequest;
    response: MediaStreamCaptureResponse;
  };
  "media.stream.end": {
    params: MediaStreamEndParams;
    result: MediaStreamEndResult;
    request: MediaStreamEndRequest;
    response: MediaStreamEndResponse;
  };
  "ui.snapshot.get": {
    params: UiSnapshotGetParams;
    result: UiSnapshot;
    request: UiSnapshotGetRequest;
    response: UiSnapshotGetResponse;
  };
  "verdict.record": {
    params: VerdictRecordParams;
    result: VerdictRecordResult;
    request: VerdictRecordRequest;
    response: VerdictRecordResponse;
  };
};

/** The name of every method. */
export type MethodName = keyof Methods;
