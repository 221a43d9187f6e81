// @devicerail-host/protocol 0.1.0: the message types of DeviceRail protocol 1.5 (type-only).
// Generated from schema/v1 by `cargo run -p devicerail-schema-gen -- write`; do not edit.

/**
 * One Action invocation.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type ActionCall = {
  /** @default null */
  arguments?: unknown;
  /** @format uuid */
  id: string;
  name: string;
};

/**
 * One Action a device offers.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type ActionDefinition = {
  description: string;
  /** JSON Schema of the `arguments` object. */
  inputSchema: unknown;
  name: string;
  /** Absent means `standard`. */
  protection?: ActionProtection | null;
};

/** How a semantic Action was carried out. */
export type ActionExecution =
  /** Through the platform's accessibility interaction. */
  | {
      mode: "nativeSemantic";
      context: UiContextRef;
    }
  /** Through the web document (DOM) itself. */
  | {
      mode: "webSemantic";
      context: UiContextRef;
    }
  /** By input at the element's coordinates. */
  | {
      mode: "coordinateFallback";
      context: UiContextRef;
      fallbackReason: CoordinateFallbackReason;
    };

/** The terminal outcome of one Action, with the four cases kept distinct. */
export type ActionOutcome =
  | {
      outcome: "succeeded";
      result: ActionResult;
    }
  | {
      outcome: "failed";
      error: ErrorInfo;
    }
  | {
      outcome: "cancelled";
      error: ErrorInfo;
    }
  | {
      outcome: "timedOut";
      error: ErrorInfo;
      /**
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
  /** @default null */
  after?: Observation | null;
  /** @default null */
  before?: Observation | null;
  /** @format uuid */
  callId: string;
  /** @default [] */
  evidence?: AssetRef[];
  /** Set for semantic Actions. */
  execution?: ActionExecution | null;
  /**
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  finishedAtMs: number;
  /** Action-specific output (semantic Actions use their result types). */
  output: unknown;
  /**
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
  id: string;
  mediaType: string;
  /**
   * Lower-case hex SHA-256 of the content, when content-addressed.
   *
   * @default null
   */
  sha256?: string | null;
  uri: string;
};

/** Arguments of `clearElement`. */
export type ClearElementArguments = {
  target: ElementTarget;
};

/** Result of `clearElement`. */
export type ClearElementResult = {
  element: UiNodeRef;
};

/** Why a semantic Action fell back to coordinates. */
export type CoordinateFallbackReason = "semanticInteractionUnavailable" | "platformLimitation";

/** A complete `device.capabilities` request. */
export type DeviceCapabilitiesRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
  | (DeviceCapabilitiesSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `device.capabilities`: every Action the connected device offers. */
export type DeviceCapabilitiesResult = ActionDefinition[];

/** A successful `device.capabilities` response. */
export type DeviceCapabilitiesSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: ActionDefinition[];
};

/** A complete `device.connect` request. */
export type DeviceConnectRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
  | (DeviceConnectSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `device.connect`: the device the connection now holds. */
export type DeviceConnectResult = DeviceInfo;

/** A successful `device.connect` response. */
export type DeviceConnectSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: DeviceInfo;
};

/** A complete `device.disconnect` request. */
export type DeviceDisconnectRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
  | (DeviceDisconnectSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `device.disconnect`. */
export type DeviceDisconnectResult = {
  disconnected: boolean;
};

/** A successful `device.disconnect` response. */
export type DeviceDisconnectSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
  /** @default null */
  arguments?: unknown;
  /** @format uuid */
  id: string;
  name: string;
};

/** A complete `device.execute` request. */
export type DeviceExecuteRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "device.execute";
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
  | (DeviceExecuteSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `device.execute`: the success result of the Action. */
export type DeviceExecuteResult = ActionResult;

/** A successful `device.execute` response. */
export type DeviceExecuteSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
  id: string;
  name: string;
  /**
   * The OS version when the driver knows it.
   *
   * @default null
   */
  osVersion?: string | null;
  platform: Platform;
};

/** A complete `device.observe` request. */
export type DeviceObserveRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
  | (DeviceObserveSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `device.observe`: what the host saw on the device. */
export type DeviceObserveResult = Observation;

/** A successful `device.observe` response. */
export type DeviceObserveSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: Observation;
};

/** Parameters of `device.select`. */
export type DeviceSelectParams = {
  deviceId: string;
};

/** A complete `device.select` request. */
export type DeviceSelectRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "device.select";
  params: DeviceSelectParams;
};

/** Any `device.select` response. */
export type DeviceSelectResponse =
  | (DeviceSelectSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `device.select`. */
export type DeviceSelectResult = {
  device: DeviceInfo;
};

/** A successful `device.select` response. */
export type DeviceSelectSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: DeviceSelectResult;
};

/** A complete `devices.list` request. */
export type DevicesListRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "devices.list";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `devices.list` response. */
export type DevicesListResponse =
  | (DevicesListSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `devices.list`. */
export type DevicesListResult = {
  devices: DeviceInfo[];
  /**
   * Present only when `device.routing.v1` was negotiated; then the
   * connection's selection, or `null` when nothing is selected.
   */
  selectedDeviceId?: string | null;
};

/** A successful `devices.list` response. */
export type DevicesListSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: DevicesListResult;
};

/**
 * Selects elements by accessibility fields (all channels) or CSS (web).
 * Every non-null field must match.
 */
export type ElementSelector = {
  /** @default null */
  context?: UiContextSelector | null;
  /**
   * @minLength 1
   * @maxLength 65536
   * @default null
   */
  css?: string | null;
  /**
   * @minLength 1
   * @maxLength 4096
   * @default null
   */
  identifier?: string | null;
  /**
   * @minLength 1
   * @maxLength 65536
   * @default null
   */
  name?: string | null;
  /**
   * @minLength 1
   * @maxLength 256
   * @default null
   */
  role?: string | null;
  /** @default null */
  text?: TextMatch | null;
  /**
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
  | {
      kind: "selector";
      selector: ElementSelector;
    }
  | {
      kind: "node";
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
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  sequence: number;
  /** @format uuid */
  sessionId: string;
  /** @format uuid */
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
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "events.clear";
  params?: SessionTargetParams | null;
};

/** Any `events.clear` response. */
export type EventsClearResponse =
  | (EventsClearSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `events.clear`. */
export type EventsClearResult = {
  deleted: boolean;
  /** @format uuid */
  sessionId: string;
};

/** A successful `events.clear` response. */
export type EventsClearSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: EventsClearResult;
};

/**
 * Parameters of `events.list`. Without `sessionId` the active Session is
 * read; without `limit` the whole suffix after `afterSequence`.
 */
export type EventsListParams = {
  /**
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  afterSequence?: number | null;
  /**
   * @minimum 1
   * @maximum 1000
   * @format uint16
   */
  limit?: number | null;
  /** @format uuid */
  sessionId?: string | null;
};

/** A complete `events.list` request. */
export type EventsListRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "events.list";
  params?: EventsListParams | null;
};

/** Any `events.list` response. */
export type EventsListResponse =
  | (EventsListSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `events.list`: the requested events in sequence order. */
export type EventsListResult = TestEvent[];

/** A successful `events.list` response. */
export type EventsListSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: TestEvent[];
};

/** `events.stream.event`. */
export type EventsStreamEventNotification = {
  jsonrpc: "2.0";
  method: "events.stream.event";
  params: EventsStreamEventParams;
};

/** Params of one `events.stream.event` notification. */
export type EventsStreamEventParams = {
  cursor: EventStreamCursor;
  event: TestEvent;
  /** @format uuid */
  subscriptionId: string;
};

/** Parameters of `events.stream.open`. */
export type EventsStreamOpenParams = {
  originPolicy: EventStreamOriginPolicy;
  /** @format uuid */
  sessionId: string;
};

/** A complete `events.stream.open` request. */
export type EventsStreamOpenRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "events.stream.open";
  params: EventsStreamOpenParams;
};

/** Any `events.stream.open` response. */
export type EventsStreamOpenResponse =
  | (EventsStreamOpenSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `events.stream.open`. */
export type EventsStreamOpenResult = {
  /**
   * @minLength 1
   * @maxLength 2048
   */
  endpoint: string;
  /**
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  expiresAtMs: number;
  /** @format uuid */
  streamEpoch: string;
};

/** A successful `events.stream.open` response. */
export type EventsStreamOpenSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: EventsStreamOpenResult;
};

/** `events.stream.terminal`. */
export type EventsStreamTerminalNotification = {
  jsonrpc: "2.0";
  method: "events.stream.terminal";
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
  /** @format uuid */
  sessionId: string;
  /** @format uuid */
  subscriptionId: string;
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
  | {
      reason: "slowConsumer";
      error: ErrorInfo;
    }
  | {
      reason: "sessionDeleted";
      error: ErrorInfo;
    }
  | {
      reason: "serverShutdown";
      error: ErrorInfo;
    }
  | {
      reason: "sequenceGap";
      error: ErrorInfo;
    }
  | {
      reason: "eventTooLarge";
      error: ErrorInfo;
    }
  | {
      reason: "internalError";
      error: ErrorInfo;
    };

/** Parameters of `events.subscribe` (WebSocket only). */
export type EventsSubscribeParams = {
  /** Resume after this confirmed position; absent replays from the start. */
  afterCursor?: EventStreamCursor | null;
  /** @format uuid */
  sessionId: string;
};

/** A complete `events.subscribe` request. */
export type EventsSubscribeRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "events.subscribe";
  params: EventsSubscribeParams;
};

/** Any `events.subscribe` response. */
export type EventsSubscribeResponse =
  | (EventsSubscribeSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `events.subscribe`. */
export type EventsSubscribeResult = {
  /**
   * The last event that existed when the subscription started; replay
   * runs through it, then live events follow.
   */
  replayThrough: EventStreamCursor;
  /** @format uuid */
  sessionId: string;
  sessionState: SessionState;
  /** @format uuid */
  subscriptionId: string;
};

/** A successful `events.subscribe` response. */
export type EventsSubscribeSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: EventsSubscribeResult;
};

/**
 * Features a client asks for: `required` ones fail the handshake when
 * unavailable, `optional` ones are enabled when available.
 */
export type FeatureOffer = {
  /**
   * @uniqueItems
   * @default []
   */
  optional?: string[];
  /**
   * @uniqueItems
   * @default []
   */
  required?: string[];
};

/** The complete set of features enabled on a connection. */
export type FeatureSelection = {
  /** @uniqueItems */
  enabled: string[];
};

/** Arguments of `findElement`. */
export type FindElementArguments = {
  selector: ElementSelector;
};

/** Result of `findElement`. */
export type FindElementResult = {
  element: UiNodeRef;
};

/** Parameters of `system.hello`. */
export type HelloParams = {
  client: PeerInfo;
  /** @default {"optional":[],"required":[]} */
  features?: FeatureOffer;
  protocol: ProtocolOffer;
};

/** Result of a successful `system.hello`. */
export type HelloResult = {
  /** @format uuid */
  connectionId: string;
  features: FeatureSelection;
  protocol: ProtocolSelection;
  server: PeerInfo;
  transport: TransportInfo;
};

/** The `jsonrpc` member of every message; always the string "2.0". */
export type JsonRpcVersion = "2.0";

/** The arguments of one recorded step. */
export type ManualActionArguments =
  /** Arguments safe to store. */
  | {
      kind: "captured";
      value: unknown;
    }
  /**
   * A protected Action: only an opaque reference the replay host
   * resolves to the real arguments at execution time.
   */
  | {
      kind: "protected";
      /**
       * @minLength 1
       * @maxLength 128
       */
      secretRef: string;
    };

/** One step of a recording. */
export type ManualActionStep = {
  arguments: ManualActionArguments;
  /** @format uuid */
  callId: string;
  /**
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  capturedAtMs: number;
  /**
   * @minLength 1
   * @maxLength 128
   */
  name: string;
  /**
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
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  endedAtMs: number;
  /**
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  formatVersion: number;
  /** @format uuid */
  recordingId: string;
  sourceDeviceId: string;
  /**
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  startedAtMs: number;
  /** @maxItems 10000 */
  steps: ManualActionStep[];
};

/** One captured frame. */
export type MediaFrame = {
  /**
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  durationMs?: number | null;
  evidence: AssetRef;
  /**
   * One-based, without gaps.
   *
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  frameIndex: number;
  keyFrame?: boolean;
  /** @format uuid */
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
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  frameIndex: number;
  /** @format uuid */
  streamId: string;
};

/** A complete `media.stream.capture` request. */
export type MediaStreamCaptureRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "media.stream.capture";
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
  | (MediaStreamCaptureSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `media.stream.capture`. */
export type MediaStreamCaptureResult = {
  frame: MediaFrame;
};

/** A successful `media.stream.capture` response. */
export type MediaStreamCaptureSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: MediaStreamCaptureResult;
};

/** Parameters of `media.stream.end`. */
export type MediaStreamEndParams = {
  /** @format uuid */
  streamId: string;
};

/** A complete `media.stream.end` request. */
export type MediaStreamEndRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "media.stream.end";
  params: MediaStreamEndParams;
};

/** Any `media.stream.end` response. */
export type MediaStreamEndResponse =
  | (MediaStreamEndSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `media.stream.end`. */
export type MediaStreamEndResult = {
  /**
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  frameCount: number;
  /** @format uuid */
  streamId: string;
};

/** A successful `media.stream.end` response. */
export type MediaStreamEndSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
  /** @format uuid */
  id: string;
  kind: MediaStreamKind;
  /**
   * Chosen by the host from the device's producer.
   *
   * @minLength 1
   * @maxLength 255
   */
  mediaType: string;
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
  kind: MediaStreamKind;
  /** @format uuid */
  streamId: string;
};

/** A complete `media.stream.start` request. */
export type MediaStreamStartRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "media.stream.start";
  params: MediaStreamStartParams;
};

/** Any `media.stream.start` response. */
export type MediaStreamStartResponse =
  | (MediaStreamStartSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `media.stream.start`. */
export type MediaStreamStartResult = {
  stream: MediaStreamInfo;
};

/** A successful `media.stream.start` response. */
export type MediaStreamStartSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  capturedAtMs: number;
  deviceId: string;
  /** @format uuid */
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
  viewport: Viewport;
};

/** Name and version of one peer (client or server). */
export type PeerInfo = {
  name: string;
  version: string;
};

/**
 * The platform family of a device.
 *
 * Open in the JSON Schema (no `additionalProperties: false`): readers must ignore
 * unknown members. Typed closed here, so a literal with an unknown member is an error.
 */
export type Platform =
  | {
      kind: "web";
    }
  | {
      kind: "android";
    }
  | {
      kind: "ios";
    }
  | {
      kind: "harmonyOs";
    }
  | {
      kind: "macOs";
    }
  | {
      kind: "windows";
    }
  | {
      kind: "linux";
    }
  | {
      kind: "rdp";
    }
  | {
      kind: "mock";
    }
  /** A platform outside the list, named by `value`. */
  | {
      kind: "other";
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
  /** @minItems 1 */
  ranges: ProtocolRange[];
};

/** The minor versions `minMinor..=maxMinor` of one major version. */
export type ProtocolRange = {
  /**
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  major: number;
  /**
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  maxMinor: number;
  /**
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  minMinor: number;
};

/** The negotiated version. */
export type ProtocolSelection = {
  selected: ProtocolVersion;
};

/** One wire version. */
export type ProtocolVersion = {
  /**
   * @minimum 0
   * @maximum 65535
   * @format uint16
   */
  major: number;
  /**
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
  /** @default null */
  arguments?: unknown;
  argumentsRedacted?: boolean;
  /** @format uuid */
  id: string;
  name: string;
};

/** Parameters of `request.cancel`. */
export type RequestCancelParams = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  requestId: string | number;
};

/** A complete `request.cancel` request. */
export type RequestCancelRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "request.cancel";
  params: RequestCancelParams;
};

/** Any `request.cancel` response. */
export type RequestCancelResponse =
  | (RequestCancelSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `request.cancel`. */
export type RequestCancelResult = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  requestId: string | number;
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
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
  error: RpcError;
  /** Always present; `null` only when the request's id was unreadable. */
  id: string | number | null;
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
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: string;
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
  | (RpcSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Anything a server sends. */
export type RpcServerMessage = RpcResponse | RpcServerNotification;

/** The two notifications a server sends. */
export type RpcServerNotification =
  | EventsStreamEventNotification
  | EventsStreamTerminalNotification;

/** A success response carrying a result of type `R`. */
export type RpcSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "session.current";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `session.current` response. */
export type SessionCurrentResponse =
  | (SessionCurrentSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `session.current`. */
export type SessionCurrentResult = {
  /** @format uuid */
  sessionId: string;
};

/** A successful `session.current` response. */
export type SessionCurrentSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: SessionCurrentResult;
};

/** Parameters of `session.end`. */
export type SessionEndParams = {
  /** Defaults to `completed`. */
  outcome?: SessionOutcome | null;
  reason?: string | null;
};

/** A complete `session.end` request. */
export type SessionEndRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "session.end";
  params?: SessionEndParams | null;
};

/** Any `session.end` response. */
export type SessionEndResponse =
  | (SessionEndSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `session.end`: the Session as it ended. */
export type SessionEndResult = SessionInfo;

/** A successful `session.end` response. */
export type SessionEndSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: SessionInfo;
};

/** A complete Session document (the legacy export shape). */
export type SessionExport = {
  events: TestEvent[];
  session: SessionInfo;
};

/**
 * Parameters of `session.export`. Neither cursor field: the legacy
 * complete export. `limit` (with optional `afterSequence`): one page of an
 * ended Session, which needs `session.export.page.v1`.
 */
export type SessionExportParams = {
  /**
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  afterSequence?: number | null;
  /**
   * @minimum 1
   * @maximum 1000
   * @format uint16
   */
  limit?: number | null;
  /** @format uuid */
  sessionId?: string | null;
};

/** A complete `session.export` request. */
export type SessionExportRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "session.export";
  params?: SessionExportParams | null;
};

/** Any `session.export` response. */
export type SessionExportResponse =
  | (SessionExportSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/**
 * Result of `session.export`. `nextAfterSequence` is present only on a
 * page that is not the last.
 */
export type SessionExportResult = {
  events: TestEvent[];
  /**
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  nextAfterSequence?: number | null;
  session: SessionInfo;
};

/** A successful `session.export` response. */
export type SessionExportSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   * @default null
   */
  endedAtMs?: number | null;
  /**
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  eventCount: number;
  /** @format uuid */
  id: string;
  /**
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  lastSequence: number;
  /**
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  startedAtMs: number;
  state: SessionState;
};

/** How a Session ended. */
export type SessionOutcome =
  | "completed"
  | "failed"
  | "cancelled"
  /** The host shut down (or crashed) while the Session was active. */
  | "shutdown";

/** A complete `session.start` request. */
export type SessionStartRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "session.start";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `session.start` response. */
export type SessionStartResponse =
  | (SessionStartSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `session.start`: the Session just started. */
export type SessionStartResult = SessionInfo;

/** A successful `session.start` response. */
export type SessionStartSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: SessionInfo;
};

/** Whether a Session still accepts events. */
export type SessionState = "active" | "ended";

/** Parameters of `events.clear` (Session deletion). */
export type SessionTargetParams = {
  /** @format uuid */
  sessionId?: string | null;
};

/** A complete `sessions.list` request. */
export type SessionsListRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "sessions.list";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `sessions.list` response. */
export type SessionsListResponse =
  | (SessionsListSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `sessions.list`: every Session the host has recorded. */
export type SessionsListResult = SessionInfo[];

/** A successful `sessions.list` response. */
export type SessionsListSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: SessionInfo[];
};

/** Arguments of `setElementValue`. */
export type SetElementValueArguments = {
  target: ElementTarget;
  /** @maxLength 65536 */
  value: string;
};

/** Result of `setElementValue`. */
export type SetElementValueResult = {
  element: UiNodeRef;
};

/** A complete `system.describe` request. */
export type SystemDescribeRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "system.describe";
  /** Absent, `{}` or `[]`. */
  params?: NoParams | null;
};

/** Any `system.describe` response. */
export type SystemDescribeResponse =
  | (SystemDescribeSuccess & { error?: never })
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
  client: PeerInfo;
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
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: SystemDescribeResult;
};

/** A complete `system.hello` request. */
export type SystemHelloRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "system.hello";
  params: HelloParams;
};

/** Any `system.hello` response. */
export type SystemHelloResponse =
  | (SystemHelloSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** A successful `system.hello` response. */
export type SystemHelloSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: HelloResult;
};

/** Arguments of `tapElement`. */
export type TapElementArguments = {
  target: ElementTarget;
};

/** Result of `tapElement`. */
export type TapElementResult = {
  element: UiNodeRef;
};

/**
 * One fact in a Session's log. `sequence` orders the log; `atMs` is
 * informational.
 */
export type TestEvent = {
  /**
   * @minimum 0
   * @maximum 9007199254740991
   * @format uint64
   */
  atMs: number;
  /** The device the event concerns, if any. */
  deviceId?: string | null;
  /** @format uuid */
  eventId: string;
  payload: TestEventPayload;
  /** The RPC request that produced the event, if any. */
  requestId?: string | number | null;
  /**
   * @minimum 1
   * @maximum 9007199254740991
   * @format uint64
   */
  sequence: number;
  /** @format uuid */
  sessionId: string;
};

/** What happened. */
export type TestEventPayload =
  | {
      type: "sessionStarted";
    }
  | {
      type: "sessionEnded";
      outcome: SessionOutcome;
      /** @default null */
      reason?: string | null;
    }
  | {
      type: "observationCaptured";
      observation: Observation;
    }
  | {
      type: "actionStarted";
      call: RecordedActionCall;
    }
  | {
      type: "actionCompleted";
      /** @format uuid */
      callId: string;
      outcome: ActionOutcome;
    }
  | {
      type: "mediaStreamStarted";
      stream: MediaStreamInfo;
    }
  | {
      type: "mediaFrameCaptured";
      frame: MediaFrame;
    }
  | {
      type: "mediaStreamEnded";
      /**
       * @minimum 0
       * @maximum 9007199254740991
       * @format uint64
       */
      frameCount: number;
      /** @format uuid */
      streamId: string;
    }
  | {
      type: "verdictRecorded";
      verdict: Verdict;
    }
  | {
      type: "error";
      error: ErrorInfo;
    };

/** A text condition of a selector. */
export type TextMatch = {
  /** Case-insensitive unless set. */
  caseSensitive?: boolean;
  /** @default "exact" */
  mode?: TextMatchMode;
  /**
   * @minLength 1
   * @maxLength 65536
   */
  value: string;
};

/** How selector text is compared. */
export type TextMatchMode = "exact" | "contains";

/** The transport a connection runs on. */
export type TransportInfo = {
  /** `ndjson` or `jsonMessage`. */
  framing: string;
  /** `stdio` or `webSocket`. */
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
   * @minLength 1
   * @maxLength 4096
   */
  contextId: string;
  contextKind: UiContextKind;
  /**
   * @minLength 1
   * @maxLength 4096
   */
  documentEpoch: string;
};

/** Picks a current context by kind and optionally id (never by epoch). */
export type UiContextSelector = {
  /**
   * @minLength 1
   * @maxLength 4096
   * @default null
   */
  contextId?: string | null;
  contextKind: UiContextKind;
};

/**
 * One node of the normalized tree. Unknown values stay `null`: drivers
 * never guess `enabled` or `hittable`.
 */
export type UiNode = {
  /** @default null */
  bounds?: UiRect | null;
  /** @default null */
  enabled?: boolean | null;
  /** @default null */
  hittable?: boolean | null;
  /**
   * @maxLength 4096
   * @default null
   */
  identifier?: string | null;
  /**
   * @maxLength 65536
   * @default null
   */
  name?: string | null;
  /**
   * @minLength 1
   * @maxLength 4096
   * @default null
   */
  parentStableNodeId?: string | null;
  /**
   * @minLength 1
   * @maxLength 256
   */
  role: string;
  /**
   * @minLength 1
   * @maxLength 4096
   */
  stableNodeId: string;
  /**
   * @maxLength 65536
   * @default null
   */
  text?: string | null;
  /**
   * @maxLength 65536
   * @default null
   */
  value?: string | null;
};

/** A durable reference to one node of one observed tree. */
export type UiNodeRef = {
  context: UiContextRef;
  /** @format uuid */
  observationId: string;
  /**
   * @minLength 1
   * @maxLength 4096
   */
  stableNodeId: string;
};

/** A rectangle in screenshot pixels (the space of `Viewport.width`/`height`). */
export type UiRect = {
  /**
   * @minimum 0.0
   * @format double
   */
  height: number;
  /**
   * @minimum 0.0
   * @format double
   */
  width: number;
  /** @format double */
  x: number;
  /** @format double */
  y: number;
};

/**
 * A whole UI tree: `nodes` in preorder, each parent before its
 * descendants, at most 768 KiB serialized.
 */
export type UiSnapshot = {
  context: UiContextRef;
  /**
   * @minimum 1
   * @maximum 1
   * @format uint16
   */
  formatVersion: number;
  /**
   * @minItems 1
   * @maxItems 10000
   */
  nodes: UiNode[];
  /** @format uuid */
  observationId: string;
  /**
   * @minItems 1
   * @maxItems 10000
   */
  rootStableNodeIds: string[];
};

/** Parameters of `ui.snapshot.get`. */
export type UiSnapshotGetParams = {
  /** @format uuid */
  observationId: string;
};

/** A complete `ui.snapshot.get` request. */
export type UiSnapshotGetRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "ui.snapshot.get";
  params: UiSnapshotGetParams;
};

/** Any `ui.snapshot.get` response. */
export type UiSnapshotGetResponse =
  | (UiSnapshotGetSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `ui.snapshot.get`: the stored UI tree of one Observation. */
export type UiSnapshotGetResult = UiSnapshot;

/** A successful `ui.snapshot.get` response. */
export type UiSnapshotGetSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
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
   * @minimum 1
   * @maximum 786432
   * @format uint32
   */
  byteLength: number;
  context: UiContextRef;
  evidence: AssetRef;
  /**
   * @minimum 1
   * @maximum 1
   * @format uint16
   */
  formatVersion: number;
  /**
   * @minimum 1
   * @maximum 10000
   * @format uint16
   */
  nodeCount: number;
};

/** A verdict with the Evidence it rests on (all from the active Session). */
export type Verdict = {
  /**
   * @maxItems 64
   * @default []
   */
  evidence?: AssetRef[];
  status: VerdictStatus;
  /**
   * @minLength 1
   * @maxLength 16384
   */
  summary: string;
};

/** Parameters of `verdict.record`. */
export type VerdictRecordParams = {
  verdict: Verdict;
};

/** A complete `verdict.record` request. */
export type VerdictRecordRequest = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  method: "verdict.record";
  params: VerdictRecordParams;
};

/** Any `verdict.record` response. */
export type VerdictRecordResponse =
  | (VerdictRecordSuccess & { error?: never })
  | (RpcFailure & { result?: never });

/** Result of `verdict.record`: the durable event. */
export type VerdictRecordResult = {
  event: TestEvent;
};

/** A successful `verdict.record` response. */
export type VerdictRecordSuccess = {
  /**
   * @minimum 0 (integer)
   * @maximum 9007199254740991 (integer)
   * @format uint64 (integer)
   */
  id: string | number;
  jsonrpc: "2.0";
  result: VerdictRecordResult;
};

/** The caller's judgement. */
export type VerdictStatus = "pass" | "fail" | "unknown";

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
  /** @default "present" */
  condition?: WaitForElementCondition;
  selector: ElementSelector;
};

/** The state `waitForElement` waits for. */
export type WaitForElementCondition = "present" | "visible" | "enabled" | "absent";

/** Result of `waitForElement`. */
export type WaitForElementResult = {
  condition: WaitForElementCondition;
  /**
   * The matching node (`null` for `absent`).
   *
   * @default null
   */
  element?: UiNodeRef | null;
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
