// @devicerail-host/protocol 0.1.0: every golden fixture, checked against its type.
// Generated from schema/v1 and fixtures/manifest.json by `cargo run -p devicerail-host-schema-gen -- write`; do not edit.
import type {
  ActionCall,
  ActionDefinition,
  ActionResult,
  ClearElementArguments,
  ClearElementResult,
  DeviceCapabilitiesRequest,
  DeviceCapabilitiesResponse,
  DeviceConnectRequest,
  DeviceConnectResponse,
  DeviceDisconnectRequest,
  DeviceDisconnectResponse,
  DeviceExecuteRequest,
  DeviceExecuteResponse,
  DeviceInfo,
  DeviceObserveRequest,
  DeviceObserveResponse,
  DeviceSelectRequest,
  DeviceSelectResponse,
  DevicesListRequest,
  DevicesListResponse,
  ErrorInfo,
  EventsClearRequest,
  EventsClearResponse,
  EventsListRequest,
  EventsListResponse,
  EventsStreamEventNotification,
  EventsStreamOpenRequest,
  EventsStreamOpenResponse,
  EventsStreamTerminalNotification,
  EventsSubscribeRequest,
  EventsSubscribeResponse,
  FindElementArguments,
  FindElementResult,
  ManualRecording,
  MediaStreamCaptureRequest,
  MediaStreamCaptureResponse,
  MediaStreamEndRequest,
  MediaStreamEndResponse,
  MediaStreamStartRequest,
  MediaStreamStartResponse,
  Observation,
  RequestCancelRequest,
  RequestCancelResponse,
  RpcResponse,
  SessionCurrentRequest,
  SessionCurrentResponse,
  SessionEndRequest,
  SessionEndResponse,
  SessionExportRequest,
  SessionExportResponse,
  SessionStartRequest,
  SessionStartResponse,
  SessionsListRequest,
  SessionsListResponse,
  SetElementValueArguments,
  SetElementValueResult,
  SystemDescribeRequest,
  SystemDescribeResponse,
  SystemHelloRequest,
  SystemHelloResponse,
  TapElementArguments,
  TapElementResult,
  TestEvent,
  UiSnapshot,
  UiSnapshotGetRequest,
  UiSnapshotGetResponse,
  VerdictRecordRequest,
  VerdictRecordResponse,
  WaitForElementArguments,
  WaitForElementResult,
} from "../index.js";

/** handshake.system-hello.request.v1 (system-hello-v1.request.json) */
export const handshakeSystemHelloRequestV1 = {
  "jsonrpc": "2.0",
  "id": 1,
  "method": "system.hello",
  "params": {
    "client": {
      "name": "devicerail-cli",
      "version": "0.1.0"
    },
    "protocol": {
      "ranges": [
        {
          "major": 1,
          "minMinor": 0,
          "maxMinor": 5
        },
        {
          "major": 2,
          "minMinor": 0,
          "maxMinor": 1
        }
      ]
    },
    "features": {
      "required": [
        "events.snapshot.v1"
      ],
      "optional": [
        "action.protected.v1",
        "device.routing.v1",
        "device.semanticActions.v1",
        "events.stream.v1",
        "media.stream.v1",
        "observation.uiSnapshot.v1",
        "request.control.v1",
        "session.export.page.v1",
        "verdict.record.v1"
      ]
    }
  }
} satisfies SystemHelloRequest;

/** handshake.system-hello.response.v1 (system-hello-v1.response.json) */
export const handshakeSystemHelloResponseV1 = {
  "jsonrpc": "2.0",
  "id": 1,
  "result": {
    "connectionId": "0195944f-8b18-7dff-8690-a9c144e7cf0f",
    "protocol": {
      "selected": {
        "major": 1,
        "minor": 5
      }
    },
    "server": {
      "name": "devicerail-host",
      "version": "0.1.0"
    },
    "transport": {
      "kind": "stdio",
      "framing": "ndjson"
    },
    "features": {
      "enabled": [
        "action.protected.v1",
        "device.routing.v1",
        "device.semanticActions.v1",
        "events.snapshot.v1",
        "events.stream.v1",
        "media.stream.v1",
        "observation.uiSnapshot.v1",
        "request.control.v1",
        "session.export.page.v1",
        "verdict.record.v1"
      ]
    }
  }
} satisfies SystemHelloResponse;

/** rpc.system-describe.request.v1 (rpc/system-describe-v1.request.json) */
export const rpcSystemDescribeRequestV1 = {
  "jsonrpc": "2.0",
  "id": 2,
  "method": "system.describe"
} satisfies SystemDescribeRequest;

/** rpc.system-describe.response.v1 (rpc/system-describe-v1.response.json) */
export const rpcSystemDescribeResponseV1 = {
  "jsonrpc": "2.0",
  "id": 2,
  "result": {
    "connection": {
      "connectionId": "0195944f-8b18-7dff-8690-a9c144e7cf0f",
      "protocol": {
        "selected": {
          "major": 1,
          "minor": 5
        }
      },
      "server": {
        "name": "devicerail-host",
        "version": "0.1.0"
      },
      "transport": {
        "kind": "stdio",
        "framing": "ndjson"
      },
      "features": {
        "enabled": [
          "action.protected.v1",
          "device.routing.v1",
          "device.semanticActions.v1",
          "events.snapshot.v1",
          "events.stream.v1",
          "media.stream.v1",
          "observation.uiSnapshot.v1",
          "request.control.v1",
          "session.export.page.v1",
          "verdict.record.v1"
        ]
      }
    },
    "client": {
      "name": "devicerail-cli",
      "version": "0.1.0"
    },
    "deviceId": "mock-1",
    "activeSessionId": "0195944f-9b80-736e-8db8-df93edd56cd5"
  }
} satisfies SystemDescribeResponse;

/** device.device-info.v1 (models/device-info-v1.json) */
export const deviceDeviceInfoV1 = {
  "id": "emulator-5556",
  "name": "Pixel 8 API 34",
  "platform": {
    "kind": "android"
  },
  "osVersion": "14",
  "connected": false
} satisfies DeviceInfo;

/** device.observation.v1 (models/observation-v1.json) */
export const deviceObservationV1 = {
  "id": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
  "deviceId": "mock-1",
  "capturedAtMs": 1741950001200,
  "viewport": {
    "width": 720,
    "height": 1280,
    "scaleFactor": 2.0
  },
  "screenshot": {
    "id": "sha256:cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec",
    "mediaType": "image/png",
    "uri": "devicerail://assets/sha256/cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec",
    "sha256": "cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec"
  },
  "uiSnapshot": {
    "formatVersion": 1,
    "context": {
      "contextKind": "native",
      "contextId": "mock-app",
      "documentEpoch": "mock-epoch-1"
    },
    "nodeCount": 7,
    "byteLength": 1809,
    "evidence": {
      "id": "sha256:952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15",
      "mediaType": "application/vnd.devicerail.ui-tree+json;version=1",
      "uri": "devicerail://assets/sha256/952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15",
      "sha256": "952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15"
    }
  },
  "metadata": {
    "orientation": "portrait",
    "revision": 3,
    "screen": "login"
  }
} satisfies Observation;

/** device.observation.omitted.v1 (models/observation-omitted-v1.json) */
export const deviceObservationOmittedV1 = {
  "id": "0195944f-c038-73c3-a258-cb9853faa3c4",
  "deviceId": "emulator-5556",
  "capturedAtMs": 1741950009400,
  "viewport": {
    "width": 1080,
    "height": 2400,
    "scaleFactor": 2.625
  },
  "screenshot": null,
  "screenshotOmission": "protectedAction",
  "uiSnapshotOmission": "protectedAction",
  "metadata": {
    "orientation": "portrait",
    "foregroundPackage": "com.android.settings"
  }
} satisfies Observation;

/** action.definition.v1 (models/action-definition-v1.json) */
export const actionDefinitionV1 = {
  "name": "scroll",
  "description": "Scroll the content by a pixel delta.",
  "inputSchema": {
    "type": "object",
    "properties": {
      "deltaX": {
        "type": "integer",
        "minimum": -100000,
        "maximum": 100000
      },
      "deltaY": {
        "type": "integer",
        "minimum": -100000,
        "maximum": 100000
      }
    },
    "required": [
      "deltaX",
      "deltaY"
    ],
    "additionalProperties": false
  }
} satisfies ActionDefinition;

/** action.definition.protected.v1 (models/action-definition-protected-v1.json) */
export const actionDefinitionProtectedV1 = {
  "name": "inputSecret",
  "description": "Type a secret into the focused field; never recorded.",
  "inputSchema": {
    "type": "object",
    "properties": {
      "text": {
        "type": "string",
        "maxLength": 4096
      }
    },
    "required": [
      "text"
    ],
    "additionalProperties": false
  },
  "protection": "protected"
} satisfies ActionDefinition;

/** action.call.v1 (models/action-call-v1.json) */
export const actionCallV1 = {
  "id": "701d2bce-7d9d-438e-ad7c-1778fb2f7505",
  "name": "inputText",
  "arguments": {
    "text": "alice"
  }
} satisfies ActionCall;

/** manual.recording.v1 (models/manual-recording-v1.json) */
export const manualRecordingV1 = {
  "formatVersion": 1,
  "recordingId": "019593e1-be80-74f3-bdae-9d6b7d4d7d37",
  "sourceDeviceId": "chromium-1",
  "actionSpaceSha256": "5ed0bf4bb5df588a35d85107abb3d6a503a38f8042cb19e735ebb0e5bd1b91d5",
  "startedAtMs": 1741942800000,
  "endedAtMs": 1741942811500,
  "steps": [
    {
      "sequence": 1,
      "capturedAtMs": 1741942802600,
      "callId": "62ad58ec-0573-4fe0-bc85-fa7c689a30cf",
      "name": "setElementValue",
      "arguments": {
        "kind": "captured",
        "value": {
          "target": {
            "kind": "selector",
            "selector": {
              "context": null,
              "role": null,
              "name": null,
              "value": null,
              "identifier": null,
              "text": null,
              "css": "input[name=\"email\"]"
            }
          },
          "value": "alice@example.test"
        }
      }
    },
    {
      "sequence": 2,
      "capturedAtMs": 1741942806100,
      "callId": "ad813ac0-6f66-439e-b692-7f597875ff72",
      "name": "inputSecret",
      "arguments": {
        "kind": "protected",
        "secretRef": "vault:staging/alice/password"
      }
    },
    {
      "sequence": 3,
      "capturedAtMs": 1741942809800,
      "callId": "25c4e434-dd04-4e1c-9a16-707bae61c6cf",
      "name": "tapElement",
      "arguments": {
        "kind": "captured",
        "value": {
          "target": {
            "kind": "selector",
            "selector": {
              "context": null,
              "role": "button",
              "name": null,
              "value": null,
              "identifier": null,
              "text": {
                "value": "log in",
                "mode": "exact"
              },
              "css": null
            }
          }
        }
      }
    }
  ]
} satisfies ManualRecording;

/** action.result.v1 (models/action-result-v1.json) */
export const actionResultV1 = {
  "callId": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
  "startedAtMs": 1741950003000,
  "finishedAtMs": 1741950003350,
  "output": {
    "element": {
      "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
      "context": {
        "contextKind": "native",
        "contextId": "mock-app",
        "documentEpoch": "mock-epoch-1"
      },
      "stableNodeId": "sign-in"
    }
  },
  "before": null,
  "after": {
    "id": "0195944f-a896-73e9-8d95-5eaf07cedcf1",
    "deviceId": "mock-1",
    "capturedAtMs": 1741950003350,
    "viewport": {
      "width": 720,
      "height": 1280,
      "scaleFactor": 2.0
    },
    "screenshot": {
      "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
      "mediaType": "image/png",
      "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
      "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
    },
    "metadata": {
      "orientation": "portrait",
      "revision": 4,
      "screen": "home"
    }
  },
  "evidence": [
    {
      "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
      "mediaType": "image/png",
      "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
      "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
    }
  ],
  "execution": {
    "mode": "nativeSemantic",
    "context": {
      "contextKind": "native",
      "contextId": "mock-app",
      "documentEpoch": "mock-epoch-1"
    }
  }
} satisfies ActionResult;

/** error.info.v1 (models/error-info-v1.json) */
export const errorInfoV1 = {
  "code": "element_not_found",
  "message": "no element matches the selector (role \"button\", name \"Sign out\")",
  "retryable": false,
  "details": {
    "selector": {
      "role": "button",
      "name": "Sign out"
    },
    "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb"
  }
} satisfies ErrorInfo;

/** rpc.device-connect.request.v1 (rpc/device-connect-v1.request.json) */
export const rpcDeviceConnectRequestV1 = {
  "jsonrpc": "2.0",
  "id": 5,
  "method": "device.connect",
  "params": {},
  "timeoutMs": 15000
} satisfies DeviceConnectRequest;

/** rpc.device-connect.response.v1 (rpc/device-connect-v1.response.json) */
export const rpcDeviceConnectResponseV1 = {
  "jsonrpc": "2.0",
  "id": 5,
  "result": {
    "id": "mock-1",
    "name": "Mock Device",
    "platform": {
      "kind": "mock"
    },
    "osVersion": "1.0",
    "connected": true
  }
} satisfies DeviceConnectResponse;

/** rpc.device-disconnect.request.v1 (rpc/device-disconnect-v1.request.json) */
export const rpcDeviceDisconnectRequestV1 = {
  "jsonrpc": "2.0",
  "id": 25,
  "method": "device.disconnect"
} satisfies DeviceDisconnectRequest;

/** rpc.device-disconnect.response.v1 (rpc/device-disconnect-v1.response.json) */
export const rpcDeviceDisconnectResponseV1 = {
  "jsonrpc": "2.0",
  "id": 25,
  "result": {
    "disconnected": true
  }
} satisfies DeviceDisconnectResponse;

/** rpc.device-capabilities.request.v1 (rpc/device-capabilities-v1.request.json) */
export const rpcDeviceCapabilitiesRequestV1 = {
  "jsonrpc": "2.0",
  "id": 6,
  "method": "device.capabilities",
  "timeoutMs": 5000
} satisfies DeviceCapabilitiesRequest;

/** rpc.device-capabilities.response.v1 (rpc/device-capabilities-v1.response.json) */
export const rpcDeviceCapabilitiesResponseV1 = {
  "jsonrpc": "2.0",
  "id": 6,
  "result": [
    {
      "name": "tap",
      "description": "Tap a point in screenshot pixels.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "x": {
            "type": "integer",
            "minimum": 0,
            "maximum": 719
          },
          "y": {
            "type": "integer",
            "minimum": 0,
            "maximum": 1279
          }
        },
        "required": [
          "x",
          "y"
        ],
        "additionalProperties": false
      }
    },
    {
      "name": "inputText",
      "description": "Type text into the focused field.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "text": {
            "type": "string",
            "maxLength": 4096
          }
        },
        "required": [
          "text"
        ],
        "additionalProperties": false
      }
    },
    {
      "name": "scroll",
      "description": "Scroll the content by a pixel delta.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "deltaX": {
            "type": "integer",
            "minimum": -100000,
            "maximum": 100000
          },
          "deltaY": {
            "type": "integer",
            "minimum": -100000,
            "maximum": 100000
          }
        },
        "required": [
          "deltaX",
          "deltaY"
        ],
        "additionalProperties": false
      }
    },
    {
      "name": "inputSecret",
      "description": "Type a secret into the focused field; never recorded.",
      "inputSchema": {
        "type": "object",
        "properties": {
          "text": {
            "type": "string",
            "maxLength": 4096
          }
        },
        "required": [
          "text"
        ],
        "additionalProperties": false
      },
      "protection": "protected"
    }
  ]
} satisfies DeviceCapabilitiesResponse;

/** rpc.device-observe.request.v1 (rpc/device-observe-v1.request.json) */
export const rpcDeviceObserveRequestV1 = {
  "jsonrpc": "2.0",
  "id": 8,
  "method": "device.observe",
  "timeoutMs": 10000
} satisfies DeviceObserveRequest;

/** rpc.device-observe.response.v1 (rpc/device-observe-v1.response.json) */
export const rpcDeviceObserveResponseV1 = {
  "jsonrpc": "2.0",
  "id": 8,
  "result": {
    "id": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
    "deviceId": "mock-1",
    "capturedAtMs": 1741950001200,
    "viewport": {
      "width": 720,
      "height": 1280,
      "scaleFactor": 2.0
    },
    "screenshot": {
      "id": "sha256:cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec",
      "mediaType": "image/png",
      "uri": "devicerail://assets/sha256/cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec",
      "sha256": "cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec"
    },
    "uiSnapshot": {
      "formatVersion": 1,
      "context": {
        "contextKind": "native",
        "contextId": "mock-app",
        "documentEpoch": "mock-epoch-1"
      },
      "nodeCount": 7,
      "byteLength": 1809,
      "evidence": {
        "id": "sha256:952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15",
        "mediaType": "application/vnd.devicerail.ui-tree+json;version=1",
        "uri": "devicerail://assets/sha256/952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15",
        "sha256": "952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15"
      }
    },
    "metadata": {
      "orientation": "portrait",
      "revision": 3,
      "screen": "login"
    }
  }
} satisfies DeviceObserveResponse;

/** rpc.device-execute.timeout.v1 (rpc/device-execute-timeout-v1.json) */
export const rpcDeviceExecuteTimeoutV1 = {
  "jsonrpc": "2.0",
  "id": 9,
  "method": "device.execute",
  "params": {
    "id": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
    "name": "tapElement",
    "arguments": {
      "target": {
        "kind": "node",
        "node": {
          "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
          "context": {
            "contextKind": "native",
            "contextId": "mock-app",
            "documentEpoch": "mock-epoch-1"
          },
          "stableNodeId": "sign-in"
        }
      }
    },
    "actionTimeoutMs": 8000
  },
  "timeoutMs": 20000
} satisfies DeviceExecuteRequest;

/** rpc.device-execute.response.v1 (rpc/device-execute-timeout-v1.response.json) */
export const rpcDeviceExecuteResponseV1 = {
  "jsonrpc": "2.0",
  "id": 9,
  "result": {
    "callId": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
    "startedAtMs": 1741950003000,
    "finishedAtMs": 1741950003350,
    "output": {
      "element": {
        "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
        "context": {
          "contextKind": "native",
          "contextId": "mock-app",
          "documentEpoch": "mock-epoch-1"
        },
        "stableNodeId": "sign-in"
      }
    },
    "before": null,
    "after": {
      "id": "0195944f-a896-73e9-8d95-5eaf07cedcf1",
      "deviceId": "mock-1",
      "capturedAtMs": 1741950003350,
      "viewport": {
        "width": 720,
        "height": 1280,
        "scaleFactor": 2.0
      },
      "screenshot": {
        "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
        "mediaType": "image/png",
        "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
        "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
      },
      "metadata": {
        "orientation": "portrait",
        "revision": 4,
        "screen": "home"
      }
    },
    "evidence": [
      {
        "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
        "mediaType": "image/png",
        "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
        "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
      }
    ],
    "execution": {
      "mode": "nativeSemantic",
      "context": {
        "contextKind": "native",
        "contextId": "mock-app",
        "documentEpoch": "mock-epoch-1"
      }
    }
  }
} satisfies DeviceExecuteResponse;

/** rpc.device-select.request.v1 (rpc/device-select-v1.request.json) */
export const rpcDeviceSelectRequestV1 = {
  "jsonrpc": "2.0",
  "id": 4,
  "method": "device.select",
  "params": {
    "deviceId": "mock-1"
  }
} satisfies DeviceSelectRequest;

/** rpc.device-select.response.v1 (rpc/device-select-v1.response.json) */
export const rpcDeviceSelectResponseV1 = {
  "jsonrpc": "2.0",
  "id": 4,
  "result": {
    "device": {
      "id": "mock-1",
      "name": "Mock Device",
      "platform": {
        "kind": "mock"
      },
      "osVersion": "1.0",
      "connected": false
    }
  }
} satisfies DeviceSelectResponse;

/** rpc.devices-list.request.v1 (rpc/devices-list-v1.request.json) */
export const rpcDevicesListRequestV1 = {
  "jsonrpc": "2.0",
  "id": 3,
  "method": "devices.list"
} satisfies DevicesListRequest;

/** rpc.devices-list.response.v1 (rpc/devices-list-v1.response.json) */
export const rpcDevicesListResponseV1 = {
  "jsonrpc": "2.0",
  "id": 3,
  "result": {
    "devices": [
      {
        "id": "chromium-1",
        "name": "Chromium 134 (headless)",
        "platform": {
          "kind": "web"
        },
        "osVersion": null,
        "connected": false
      },
      {
        "id": "emulator-5556",
        "name": "Pixel 8 API 34",
        "platform": {
          "kind": "android"
        },
        "osVersion": "14",
        "connected": false
      },
      {
        "id": "mock-1",
        "name": "Mock Device",
        "platform": {
          "kind": "mock"
        },
        "osVersion": "1.0",
        "connected": false
      }
    ],
    "selectedDeviceId": null
  }
} satisfies DevicesListResponse;

/** rpc.request-cancel.request.v1 (rpc/request-cancel-v1.request.json) */
export const rpcRequestCancelRequestV1 = {
  "jsonrpc": "2.0",
  "id": 12,
  "method": "request.cancel",
  "params": {
    "requestId": 11
  }
} satisfies RequestCancelRequest;

/** rpc.request-cancel.response.v1 (rpc/request-cancel-v1.response.json) */
export const rpcRequestCancelResponseV1 = {
  "jsonrpc": "2.0",
  "id": 12,
  "result": {
    "requestId": 11,
    "status": "requested"
  }
} satisfies RequestCancelResponse;

/** rpc.session-start.request.v1 (rpc/session-start-v1.request.json) */
export const rpcSessionStartRequestV1 = {
  "jsonrpc": "2.0",
  "id": 7,
  "method": "session.start"
} satisfies SessionStartRequest;

/** rpc.session-start.response.v1 (rpc/session-start-v1.response.json) */
export const rpcSessionStartResponseV1 = {
  "jsonrpc": "2.0",
  "id": 7,
  "result": {
    "id": "0195944f-9b80-736e-8db8-df93edd56cd5",
    "state": "active",
    "startedAtMs": 1741950000000,
    "endedAtMs": null,
    "eventCount": 1,
    "lastSequence": 1
  }
} satisfies SessionStartResponse;

/** rpc.session-current.request.v1 (rpc/session-current-v1.request.json) */
export const rpcSessionCurrentRequestV1 = {
  "jsonrpc": "2.0",
  "id": 19,
  "method": "session.current"
} satisfies SessionCurrentRequest;

/** rpc.session-current.response.v1 (rpc/session-current-v1.response.json) */
export const rpcSessionCurrentResponseV1 = {
  "jsonrpc": "2.0",
  "id": 19,
  "result": {
    "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5"
  }
} satisfies SessionCurrentResponse;

/** rpc.session-end.request.v1 (rpc/session-end-v1.request.json) */
export const rpcSessionEndRequestV1 = {
  "jsonrpc": "2.0",
  "id": 20,
  "method": "session.end",
  "params": {
    "outcome": "completed",
    "reason": "login smoke test finished"
  }
} satisfies SessionEndRequest;

/** rpc.session-end.response.v1 (rpc/session-end-v1.response.json) */
export const rpcSessionEndResponseV1 = {
  "jsonrpc": "2.0",
  "id": 20,
  "result": {
    "id": "0195944f-9b80-736e-8db8-df93edd56cd5",
    "state": "ended",
    "startedAtMs": 1741950000000,
    "endedAtMs": 1741950017000,
    "eventCount": 16,
    "lastSequence": 16
  }
} satisfies SessionEndResponse;

/** rpc.sessions-list.request.v1 (rpc/sessions-list-v1.request.json) */
export const rpcSessionsListRequestV1 = {
  "jsonrpc": "2.0",
  "id": 21,
  "method": "sessions.list"
} satisfies SessionsListRequest;

/** rpc.sessions-list.response.v1 (rpc/sessions-list-v1.response.json) */
export const rpcSessionsListResponseV1 = {
  "jsonrpc": "2.0",
  "id": 21,
  "result": [
    {
      "id": "01958f29-3f80-75ba-a280-3d1dd057e020",
      "state": "ended",
      "startedAtMs": 1741863600000,
      "endedAtMs": 1741863900000,
      "eventCount": 42,
      "lastSequence": 42
    },
    {
      "id": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "state": "ended",
      "startedAtMs": 1741950000000,
      "endedAtMs": 1741950017000,
      "eventCount": 16,
      "lastSequence": 16
    }
  ]
} satisfies SessionsListResponse;

/** rpc.session-export.request.v1 (rpc/session-export-v1.request.json) */
export const rpcSessionExportRequestV1 = {
  "jsonrpc": "2.0",
  "id": 22,
  "method": "session.export",
  "params": {
    "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
    "afterSequence": 2,
    "limit": 2
  }
} satisfies SessionExportRequest;

/** rpc.session-export.response.v1 (rpc/session-export-v1.response.json) */
export const rpcSessionExportResponseV1 = {
  "jsonrpc": "2.0",
  "id": 22,
  "result": {
    "session": {
      "id": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "state": "ended",
      "startedAtMs": 1741950000000,
      "endedAtMs": 1741950017000,
      "eventCount": 16,
      "lastSequence": 16
    },
    "events": [
      {
        "eventId": "0195944f-a738-7230-a452-3570ecf381d7",
        "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
        "sequence": 3,
        "requestId": 9,
        "deviceId": "mock-1",
        "atMs": 1741950003000,
        "payload": {
          "type": "actionStarted",
          "call": {
            "id": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
            "name": "tapElement",
            "arguments": {
              "target": {
                "kind": "node",
                "node": {
                  "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
                  "context": {
                    "contextKind": "native",
                    "contextId": "mock-app",
                    "documentEpoch": "mock-epoch-1"
                  },
                  "stableNodeId": "sign-in"
                }
              }
            }
          }
        }
      },
      {
        "eventId": "0195944f-a896-79e0-ae8e-30db3fbcdf63",
        "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
        "sequence": 4,
        "requestId": 9,
        "deviceId": "mock-1",
        "atMs": 1741950003350,
        "payload": {
          "type": "actionCompleted",
          "callId": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
          "outcome": {
            "outcome": "succeeded",
            "result": {
              "callId": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
              "startedAtMs": 1741950003000,
              "finishedAtMs": 1741950003350,
              "output": {
                "element": {
                  "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
                  "context": {
                    "contextKind": "native",
                    "contextId": "mock-app",
                    "documentEpoch": "mock-epoch-1"
                  },
                  "stableNodeId": "sign-in"
                }
              },
              "before": null,
              "after": {
                "id": "0195944f-a896-73e9-8d95-5eaf07cedcf1",
                "deviceId": "mock-1",
                "capturedAtMs": 1741950003350,
                "viewport": {
                  "width": 720,
                  "height": 1280,
                  "scaleFactor": 2.0
                },
                "screenshot": {
                  "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
                  "mediaType": "image/png",
                  "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
                  "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
                },
                "metadata": {
                  "orientation": "portrait",
                  "revision": 4,
                  "screen": "home"
                }
              },
              "evidence": [
                {
                  "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
                  "mediaType": "image/png",
                  "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
                  "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
                }
              ],
              "execution": {
                "mode": "nativeSemantic",
                "context": {
                  "contextKind": "native",
                  "contextId": "mock-app",
                  "documentEpoch": "mock-epoch-1"
                }
              }
            }
          }
        }
      }
    ],
    "nextAfterSequence": 4
  }
} satisfies SessionExportResponse;

/** rpc.events-list.request.v1 (rpc/events-list-v1.request.json) */
export const rpcEventsListRequestV1 = {
  "jsonrpc": "2.0",
  "id": 23,
  "method": "events.list",
  "params": {
    "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
    "afterSequence": 12,
    "limit": 2
  }
} satisfies EventsListRequest;

/** rpc.events-list.response.v1 (rpc/events-list-v1.response.json) */
export const rpcEventsListResponseV1 = {
  "jsonrpc": "2.0",
  "id": 23,
  "result": [
    {
      "eventId": "0195944f-d99c-7f71-bc10-c31afbed0215",
      "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "sequence": 13,
      "requestId": 16,
      "deviceId": "mock-1",
      "atMs": 1741950015900,
      "payload": {
        "type": "mediaStreamEnded",
        "streamId": "0c082f8c-452f-48aa-917b-86a0c2d2146a",
        "frameCount": 1
      }
    },
    {
      "eventId": "0195944f-dbf4-7d89-afcc-8e073dab946a",
      "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "sequence": 14,
      "requestId": 18,
      "deviceId": "mock-1",
      "atMs": 1741950016500,
      "payload": {
        "type": "verdictRecorded",
        "verdict": {
          "status": "pass",
          "summary": "Signing in as alice reaches the home screen and shows the welcome text.",
          "evidence": [
            {
              "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
              "mediaType": "image/png",
              "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
              "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
            }
          ]
        }
      }
    }
  ]
} satisfies EventsListResponse;

/** rpc.events-clear.request.v1 (rpc/events-clear-v1.request.json) */
export const rpcEventsClearRequestV1 = {
  "jsonrpc": "2.0",
  "id": 24,
  "method": "events.clear",
  "params": {
    "sessionId": "01958f29-3f80-75ba-a280-3d1dd057e020"
  }
} satisfies EventsClearRequest;

/** rpc.events-clear.response.v1 (rpc/events-clear-v1.response.json) */
export const rpcEventsClearResponseV1 = {
  "jsonrpc": "2.0",
  "id": 24,
  "result": {
    "deleted": true,
    "sessionId": "01958f29-3f80-75ba-a280-3d1dd057e020"
  }
} satisfies EventsClearResponse;

/** rpc.media-stream-capture.request.v1 (rpc/media-stream-capture-v1.request.json) */
export const rpcMediaStreamCaptureRequestV1 = {
  "jsonrpc": "2.0",
  "id": 15,
  "method": "media.stream.capture",
  "params": {
    "streamId": "0c082f8c-452f-48aa-917b-86a0c2d2146a",
    "frameIndex": 1,
    "durationMs": 250
  },
  "timeoutMs": 10000
} satisfies MediaStreamCaptureRequest;

/** rpc.media-stream-capture.response.v1 (rpc/media-stream-capture-v1.response.json) */
export const rpcMediaStreamCaptureResponseV1 = {
  "jsonrpc": "2.0",
  "id": 15,
  "result": {
    "frame": {
      "streamId": "0c082f8c-452f-48aa-917b-86a0c2d2146a",
      "frameIndex": 1,
      "keyFrame": true,
      "durationMs": 250,
      "evidence": {
        "id": "sha256:0f37296c27f8478bcffaf2a702c86aa59df9189b9728de7d783abe50b75e465b",
        "mediaType": "image/png",
        "uri": "devicerail://assets/sha256/0f37296c27f8478bcffaf2a702c86aa59df9189b9728de7d783abe50b75e465b",
        "sha256": "0f37296c27f8478bcffaf2a702c86aa59df9189b9728de7d783abe50b75e465b"
      }
    }
  }
} satisfies MediaStreamCaptureResponse;

/** rpc.media-stream-end.request.v1 (rpc/media-stream-end-v1.request.json) */
export const rpcMediaStreamEndRequestV1 = {
  "jsonrpc": "2.0",
  "id": 16,
  "method": "media.stream.end",
  "params": {
    "streamId": "0c082f8c-452f-48aa-917b-86a0c2d2146a"
  }
} satisfies MediaStreamEndRequest;

/** rpc.media-stream-end.response.v1 (rpc/media-stream-end-v1.response.json) */
export const rpcMediaStreamEndResponseV1 = {
  "jsonrpc": "2.0",
  "id": 16,
  "result": {
    "streamId": "0c082f8c-452f-48aa-917b-86a0c2d2146a",
    "frameCount": 1
  }
} satisfies MediaStreamEndResponse;

/** rpc.media-stream-start.request.v1 (rpc/media-stream-start-v1.request.json) */
export const rpcMediaStreamStartRequestV1 = {
  "jsonrpc": "2.0",
  "id": 14,
  "method": "media.stream.start",
  "params": {
    "streamId": "0c082f8c-452f-48aa-917b-86a0c2d2146a",
    "kind": "video"
  }
} satisfies MediaStreamStartRequest;

/** rpc.media-stream-start.response.v1 (rpc/media-stream-start-v1.response.json) */
export const rpcMediaStreamStartResponseV1 = {
  "jsonrpc": "2.0",
  "id": 14,
  "result": {
    "stream": {
      "id": "0c082f8c-452f-48aa-917b-86a0c2d2146a",
      "kind": "video",
      "mediaType": "image/png",
      "viewport": {
        "width": 720,
        "height": 1280,
        "scaleFactor": 2.0
      }
    }
  }
} satisfies MediaStreamStartResponse;

/** rpc.failure.v1 (rpc/failure-v1.json) */
export const rpcFailureV1 = {
  "jsonrpc": "2.0",
  "id": 27,
  "error": {
    "code": -32000,
    "message": "device emulator-5556 is offline",
    "data": {
      "code": "device_unavailable",
      "message": "device emulator-5556 is offline",
      "retryable": true,
      "details": {
        "deviceId": "emulator-5556",
        "adbState": "offline"
      }
    }
  }
} satisfies RpcResponse;

/** event.session-started.v1 (events/session-started-v1.json) */
export const eventSessionStartedV1 = {
  "eventId": "0195944f-9b80-7dac-826b-ac30a0e43d2d",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 1,
  "requestId": 7,
  "atMs": 1741950000000,
  "payload": {
    "type": "sessionStarted"
  }
} satisfies TestEvent;

/** event.observation-captured.v1 (events/observation-captured-v1.json) */
export const eventObservationCapturedV1 = {
  "eventId": "0195944f-a030-7d67-a8ff-2f7a0b344198",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 2,
  "requestId": 8,
  "deviceId": "mock-1",
  "atMs": 1741950001200,
  "payload": {
    "type": "observationCaptured",
    "observation": {
      "id": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
      "deviceId": "mock-1",
      "capturedAtMs": 1741950001200,
      "viewport": {
        "width": 720,
        "height": 1280,
        "scaleFactor": 2.0
      },
      "screenshot": {
        "id": "sha256:cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec",
        "mediaType": "image/png",
        "uri": "devicerail://assets/sha256/cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec",
        "sha256": "cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec"
      },
      "uiSnapshot": {
        "formatVersion": 1,
        "context": {
          "contextKind": "native",
          "contextId": "mock-app",
          "documentEpoch": "mock-epoch-1"
        },
        "nodeCount": 7,
        "byteLength": 1809,
        "evidence": {
          "id": "sha256:952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15",
          "mediaType": "application/vnd.devicerail.ui-tree+json;version=1",
          "uri": "devicerail://assets/sha256/952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15",
          "sha256": "952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15"
        }
      },
      "metadata": {
        "orientation": "portrait",
        "revision": 3,
        "screen": "login"
      }
    }
  }
} satisfies TestEvent;

/** event.action-started.succeeded.v1 (events/action-started-succeeded-v1.json) */
export const eventActionStartedSucceededV1 = {
  "eventId": "0195944f-a738-7230-a452-3570ecf381d7",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 3,
  "requestId": 9,
  "deviceId": "mock-1",
  "atMs": 1741950003000,
  "payload": {
    "type": "actionStarted",
    "call": {
      "id": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
      "name": "tapElement",
      "arguments": {
        "target": {
          "kind": "node",
          "node": {
            "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
            "context": {
              "contextKind": "native",
              "contextId": "mock-app",
              "documentEpoch": "mock-epoch-1"
            },
            "stableNodeId": "sign-in"
          }
        }
      }
    }
  }
} satisfies TestEvent;

/** event.action-completed.succeeded.v1 (events/action-completed-succeeded-v1.json) */
export const eventActionCompletedSucceededV1 = {
  "eventId": "0195944f-a896-79e0-ae8e-30db3fbcdf63",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 4,
  "requestId": 9,
  "deviceId": "mock-1",
  "atMs": 1741950003350,
  "payload": {
    "type": "actionCompleted",
    "callId": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
    "outcome": {
      "outcome": "succeeded",
      "result": {
        "callId": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
        "startedAtMs": 1741950003000,
        "finishedAtMs": 1741950003350,
        "output": {
          "element": {
            "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
            "context": {
              "contextKind": "native",
              "contextId": "mock-app",
              "documentEpoch": "mock-epoch-1"
            },
            "stableNodeId": "sign-in"
          }
        },
        "before": null,
        "after": {
          "id": "0195944f-a896-73e9-8d95-5eaf07cedcf1",
          "deviceId": "mock-1",
          "capturedAtMs": 1741950003350,
          "viewport": {
            "width": 720,
            "height": 1280,
            "scaleFactor": 2.0
          },
          "screenshot": {
            "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
            "mediaType": "image/png",
            "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
            "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
          },
          "metadata": {
            "orientation": "portrait",
            "revision": 4,
            "screen": "home"
          }
        },
        "evidence": [
          {
            "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
            "mediaType": "image/png",
            "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
            "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
          }
        ],
        "execution": {
          "mode": "nativeSemantic",
          "context": {
            "contextKind": "native",
            "contextId": "mock-app",
            "documentEpoch": "mock-epoch-1"
          }
        }
      }
    }
  }
} satisfies TestEvent;

/** event.action-started.failed.v1 (events/action-started-failed-v1.json) */
export const eventActionStartedFailedV1 = {
  "eventId": "0195944f-ab84-7476-b74a-dd4688358923",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 5,
  "requestId": 10,
  "deviceId": "mock-1",
  "atMs": 1741950004100,
  "payload": {
    "type": "actionStarted",
    "call": {
      "id": "537dd03b-94b0-4201-8616-5a48b9a71fbd",
      "name": "inputSecret",
      "arguments": null,
      "argumentsRedacted": true
    }
  }
} satisfies TestEvent;

/** event.action-completed.failed.v1 (events/action-completed-failed-v1.json) */
export const eventActionCompletedFailedV1 = {
  "eventId": "0195944f-abd4-707b-a9f8-94c41f9f90e7",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 6,
  "requestId": 10,
  "deviceId": "mock-1",
  "atMs": 1741950004180,
  "payload": {
    "type": "actionCompleted",
    "callId": "537dd03b-94b0-4201-8616-5a48b9a71fbd",
    "outcome": {
      "outcome": "failed",
      "error": {
        "code": "action_failed",
        "message": "inputSecret needs a focused text field",
        "retryable": false,
        "details": {
          "action": "inputSecret",
          "focus": null
        }
      }
    }
  }
} satisfies TestEvent;

/** event.action-started.cancelled.v1 (events/action-started-cancelled-v1.json) */
export const eventActionStartedCancelledV1 = {
  "eventId": "0195944f-ad14-71b4-894b-ee8c0094a8d0",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 7,
  "requestId": 11,
  "deviceId": "mock-1",
  "atMs": 1741950004500,
  "payload": {
    "type": "actionStarted",
    "call": {
      "id": "b187bdad-47bd-48bb-8d4d-2cd61c9c2db1",
      "name": "waitForElement",
      "arguments": {
        "selector": {
          "context": null,
          "role": "button",
          "name": "Sign out",
          "value": null,
          "identifier": null,
          "text": null,
          "css": null
        },
        "condition": "visible"
      }
    }
  }
} satisfies TestEvent;

/** event.action-completed.cancelled.v1 (events/action-completed-cancelled-v1.json) */
export const eventActionCompletedCancelledV1 = {
  "eventId": "0195944f-b1d8-745b-8a85-5dc84eac0e94",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 8,
  "requestId": 11,
  "deviceId": "mock-1",
  "atMs": 1741950005720,
  "payload": {
    "type": "actionCompleted",
    "callId": "b187bdad-47bd-48bb-8d4d-2cd61c9c2db1",
    "outcome": {
      "outcome": "cancelled",
      "error": {
        "code": "action_cancelled",
        "message": "request 11 was cancelled by request 12",
        "retryable": false,
        "details": {
          "cancelledBy": 12
        }
      }
    }
  }
} satisfies TestEvent;

/** event.action-started.timed-out.v1 (events/action-started-timed-out-v1.json) */
export const eventActionStartedTimedOutV1 = {
  "eventId": "0195944f-b2f0-737b-bbab-fd63cc3a4bd6",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 9,
  "requestId": 13,
  "deviceId": "mock-1",
  "atMs": 1741950006000,
  "payload": {
    "type": "actionStarted",
    "call": {
      "id": "b632b7e7-fe03-4afd-9693-861d252c67c7",
      "name": "scroll",
      "arguments": {
        "deltaX": 0,
        "deltaY": -640
      }
    }
  }
} satisfies TestEvent;

/** event.action-completed.timed-out.v1 (events/action-completed-timed-out-v1.json) */
export const eventActionCompletedTimedOutV1 = {
  "eventId": "0195944f-d230-7533-a56f-c7d7fefc0ae2",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 10,
  "requestId": 13,
  "deviceId": "mock-1",
  "atMs": 1741950014000,
  "payload": {
    "type": "actionCompleted",
    "callId": "b632b7e7-fe03-4afd-9693-861d252c67c7",
    "outcome": {
      "outcome": "timedOut",
      "error": {
        "code": "action_timeout",
        "message": "scroll did not finish within 8000 ms",
        "retryable": true,
        "details": {
          "actionTimeoutMs": 8000
        }
      },
      "timeoutMs": 8000
    }
  }
} satisfies TestEvent;

/** event.media-stream-started.v1 (events/media-stream-started-v1.json) */
export const eventMediaStreamStartedV1 = {
  "eventId": "0195944f-d618-76b3-8e24-d109577afdc5",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 11,
  "requestId": 14,
  "deviceId": "mock-1",
  "atMs": 1741950015000,
  "payload": {
    "type": "mediaStreamStarted",
    "stream": {
      "id": "0c082f8c-452f-48aa-917b-86a0c2d2146a",
      "kind": "video",
      "mediaType": "image/png",
      "viewport": {
        "width": 720,
        "height": 1280,
        "scaleFactor": 2.0
      }
    }
  }
} satisfies TestEvent;

/** event.media-frame-captured.v1 (events/media-frame-captured-v1.json) */
export const eventMediaFrameCapturedV1 = {
  "eventId": "0195944f-d71c-7cd7-92a3-c48a65984e65",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 12,
  "requestId": 15,
  "deviceId": "mock-1",
  "atMs": 1741950015260,
  "payload": {
    "type": "mediaFrameCaptured",
    "frame": {
      "streamId": "0c082f8c-452f-48aa-917b-86a0c2d2146a",
      "frameIndex": 1,
      "keyFrame": true,
      "durationMs": 250,
      "evidence": {
        "id": "sha256:0f37296c27f8478bcffaf2a702c86aa59df9189b9728de7d783abe50b75e465b",
        "mediaType": "image/png",
        "uri": "devicerail://assets/sha256/0f37296c27f8478bcffaf2a702c86aa59df9189b9728de7d783abe50b75e465b",
        "sha256": "0f37296c27f8478bcffaf2a702c86aa59df9189b9728de7d783abe50b75e465b"
      }
    }
  }
} satisfies TestEvent;

/** event.media-stream-ended.v1 (events/media-stream-ended-v1.json) */
export const eventMediaStreamEndedV1 = {
  "eventId": "0195944f-d99c-7f71-bc10-c31afbed0215",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 13,
  "requestId": 16,
  "deviceId": "mock-1",
  "atMs": 1741950015900,
  "payload": {
    "type": "mediaStreamEnded",
    "streamId": "0c082f8c-452f-48aa-917b-86a0c2d2146a",
    "frameCount": 1
  }
} satisfies TestEvent;

/** event.verdict-recorded.v1 (events/verdict-recorded-v1.json) */
export const eventVerdictRecordedV1 = {
  "eventId": "0195944f-dbf4-7d89-afcc-8e073dab946a",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 14,
  "requestId": 18,
  "deviceId": "mock-1",
  "atMs": 1741950016500,
  "payload": {
    "type": "verdictRecorded",
    "verdict": {
      "status": "pass",
      "summary": "Signing in as alice reaches the home screen and shows the welcome text.",
      "evidence": [
        {
          "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
          "mediaType": "image/png",
          "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
          "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
        }
      ]
    }
  }
} satisfies TestEvent;

/** event.error.v1 (events/error-v1.json) */
export const eventErrorV1 = {
  "eventId": "0195944f-dbfe-7859-9a01-5160fa6ef90a",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 15,
  "atMs": 1741950016510,
  "payload": {
    "type": "error",
    "error": {
      "code": "session_degraded",
      "message": "the session recorded 3 terminal Action errors",
      "retryable": false,
      "details": {
        "failed": 1,
        "cancelled": 1,
        "timedOut": 1
      }
    }
  }
} satisfies TestEvent;

/** event.session-ended.v1 (events/session-ended-v1.json) */
export const eventSessionEndedV1 = {
  "eventId": "0195944f-dde8-7857-97e8-ec97e378507a",
  "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
  "sequence": 16,
  "requestId": 20,
  "atMs": 1741950017000,
  "payload": {
    "type": "sessionEnded",
    "outcome": "completed",
    "reason": "login smoke test finished"
  }
} satisfies TestEvent;

/** stream.events-open.request.v1 (stream/events-stream-open-v1.request.json) */
export const streamEventsOpenRequestV1 = {
  "jsonrpc": "2.0",
  "id": 26,
  "method": "events.stream.open",
  "params": {
    "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
    "originPolicy": {
      "kind": "exact",
      "origin": "http://127.0.0.1:8730"
    }
  }
} satisfies EventsStreamOpenRequest;

/** stream.events-open.response.v1 (stream/events-stream-open-v1.response.json) */
export const streamEventsOpenResponseV1 = {
  "jsonrpc": "2.0",
  "id": 26,
  "result": {
    "endpoint": "ws://127.0.0.1:48211/events/be410184f9d850c1a8462103b918d9914e8d984b6cd382d2ae24768e8912b9e1",
    "streamEpoch": "01959418-ad00-77d1-8b8a-cc079f7fce21",
    "expiresAtMs": 1741950031650
  }
} satisfies EventsStreamOpenResponse;

/** stream.websocket-hello.request.v1 (stream/websocket-system-hello-v1.request.json) */
export const streamWebsocketHelloRequestV1 = {
  "jsonrpc": "2.0",
  "id": "ws-hello",
  "method": "system.hello",
  "params": {
    "client": {
      "name": "devicerail-dashboard",
      "version": "0.1.0"
    },
    "protocol": {
      "ranges": [
        {
          "major": 1,
          "minMinor": 3,
          "maxMinor": 5
        }
      ]
    },
    "features": {
      "required": [
        "events.stream.v1"
      ],
      "optional": [
        "media.stream.v1"
      ]
    }
  }
} satisfies SystemHelloRequest;

/** stream.websocket-hello.response.v1 (stream/websocket-system-hello-v1.response.json) */
export const streamWebsocketHelloResponseV1 = {
  "jsonrpc": "2.0",
  "id": "ws-hello",
  "result": {
    "connectionId": "0195944f-a288-7869-9166-765c1e250c70",
    "protocol": {
      "selected": {
        "major": 1,
        "minor": 5
      }
    },
    "server": {
      "name": "devicerail-host",
      "version": "0.1.0"
    },
    "transport": {
      "kind": "webSocket",
      "framing": "jsonMessage"
    },
    "features": {
      "enabled": [
        "events.stream.v1"
      ]
    }
  }
} satisfies SystemHelloResponse;

/** stream.events-subscribe.request.v1 (stream/events-subscribe-v1.request.json) */
export const streamEventsSubscribeRequestV1 = {
  "jsonrpc": "2.0",
  "id": "ws-subscribe",
  "method": "events.subscribe",
  "params": {
    "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
    "afterCursor": {
      "streamEpoch": "01959418-ad00-77d1-8b8a-cc079f7fce21",
      "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "sequence": 2
    }
  }
} satisfies EventsSubscribeRequest;

/** stream.events-subscribe.response.v1 (stream/events-subscribe-v1.response.json) */
export const streamEventsSubscribeResponseV1 = {
  "jsonrpc": "2.0",
  "id": "ws-subscribe",
  "result": {
    "subscriptionId": "0195944f-a2ba-7729-85a3-79350ef519ec",
    "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
    "replayThrough": {
      "streamEpoch": "01959418-ad00-77d1-8b8a-cc079f7fce21",
      "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "sequence": 5
    },
    "sessionState": "active"
  }
} satisfies EventsSubscribeResponse;

/** stream.event.notification.v1 (stream/events-stream-event-v1.notification.json) */
export const streamEventNotificationV1 = {
  "jsonrpc": "2.0",
  "method": "events.stream.event",
  "params": {
    "subscriptionId": "0195944f-a2ba-7729-85a3-79350ef519ec",
    "cursor": {
      "streamEpoch": "01959418-ad00-77d1-8b8a-cc079f7fce21",
      "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "sequence": 3
    },
    "event": {
      "eventId": "0195944f-a738-7230-a452-3570ecf381d7",
      "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "sequence": 3,
      "requestId": 9,
      "deviceId": "mock-1",
      "atMs": 1741950003000,
      "payload": {
        "type": "actionStarted",
        "call": {
          "id": "7e961a90-fcf2-4b79-91d1-d12fbc0bd1ab",
          "name": "tapElement",
          "arguments": {
            "target": {
              "kind": "node",
              "node": {
                "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
                "context": {
                  "contextKind": "native",
                  "contextId": "mock-app",
                  "documentEpoch": "mock-epoch-1"
                },
                "stableNodeId": "sign-in"
              }
            }
          }
        }
      }
    }
  }
} satisfies EventsStreamEventNotification;

/** stream.terminal.slow-consumer.notification.v1 (stream/events-stream-terminal-v1.notification.json) */
export const streamTerminalSlowConsumerNotificationV1 = {
  "jsonrpc": "2.0",
  "method": "events.stream.terminal",
  "params": {
    "subscriptionId": "0195944f-a2ba-7729-85a3-79350ef519ec",
    "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
    "lastEmittedCursor": {
      "streamEpoch": "01959418-ad00-77d1-8b8a-cc079f7fce21",
      "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "sequence": 9
    },
    "termination": {
      "reason": "slowConsumer",
      "error": {
        "code": "stream_slow_consumer",
        "message": "the subscriber fell 256 events behind",
        "retryable": true,
        "details": {
          "queueCapacity": 256
        }
      }
    }
  }
} satisfies EventsStreamTerminalNotification;

/** ui.snapshot.v1 (models/ui-snapshot-v1.json) */
export const uiSnapshotV1 = {
  "formatVersion": 1,
  "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
  "context": {
    "contextKind": "native",
    "contextId": "mock-app",
    "documentEpoch": "mock-epoch-1"
  },
  "rootStableNodeIds": [
    "app"
  ],
  "nodes": [
    {
      "stableNodeId": "app",
      "parentStableNodeId": null,
      "role": "application",
      "name": "Mock Login",
      "value": null,
      "identifier": "app",
      "text": null,
      "bounds": {
        "x": 0.0,
        "y": 0.0,
        "width": 720.0,
        "height": 1280.0
      },
      "enabled": true,
      "hittable": false
    },
    {
      "stableNodeId": "title",
      "parentStableNodeId": "app",
      "role": "staticText",
      "name": null,
      "value": null,
      "identifier": "title",
      "text": "Sign in",
      "bounds": {
        "x": 60.0,
        "y": 120.0,
        "width": 600.0,
        "height": 80.0
      },
      "enabled": true,
      "hittable": false
    },
    {
      "stableNodeId": "username",
      "parentStableNodeId": "app",
      "role": "textField",
      "name": "Username",
      "value": "alice",
      "identifier": "username",
      "text": null,
      "bounds": {
        "x": 60.0,
        "y": 280.0,
        "width": 600.0,
        "height": 96.0
      },
      "enabled": true,
      "hittable": true
    },
    {
      "stableNodeId": "password",
      "parentStableNodeId": "app",
      "role": "secureTextField",
      "name": "Password",
      "value": "••••••••",
      "identifier": "password",
      "text": null,
      "bounds": {
        "x": 60.0,
        "y": 420.0,
        "width": 600.0,
        "height": 96.0
      },
      "enabled": true,
      "hittable": true
    },
    {
      "stableNodeId": "sign-in",
      "parentStableNodeId": "app",
      "role": "button",
      "name": "Sign in",
      "value": null,
      "identifier": "sign-in",
      "text": "Sign in",
      "bounds": {
        "x": 60.0,
        "y": 580.0,
        "width": 600.0,
        "height": 100.0
      },
      "enabled": true,
      "hittable": true
    },
    {
      "stableNodeId": "help",
      "parentStableNodeId": "app",
      "role": "button",
      "name": "Help",
      "value": null,
      "identifier": "help",
      "text": "Help",
      "bounds": {
        "x": 60.0,
        "y": 720.0,
        "width": 280.0,
        "height": 80.0
      },
      "enabled": false,
      "hittable": false
    },
    {
      "stableNodeId": "status",
      "parentStableNodeId": "app",
      "role": "staticText",
      "name": null,
      "value": null,
      "identifier": "status",
      "text": "",
      "bounds": {
        "x": 60.0,
        "y": 860.0,
        "width": 600.0,
        "height": 60.0
      },
      "enabled": true,
      "hittable": false
    }
  ]
} satisfies UiSnapshot;

/** action.find-element.arguments.v1 (models/find-element-arguments-v1.json) */
export const actionFindElementArgumentsV1 = {
  "selector": {
    "context": {
      "contextKind": "native",
      "contextId": "mock-app"
    },
    "role": "textField",
    "name": "Username",
    "value": null,
    "identifier": null,
    "text": null,
    "css": null
  }
} satisfies FindElementArguments;

/** action.find-element.result.v1 (models/find-element-result-v1.json) */
export const actionFindElementResultV1 = {
  "element": {
    "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
    "context": {
      "contextKind": "native",
      "contextId": "mock-app",
      "documentEpoch": "mock-epoch-1"
    },
    "stableNodeId": "username"
  }
} satisfies FindElementResult;

/** action.tap-element.arguments.v1 (models/tap-element-arguments-v1.json) */
export const actionTapElementArgumentsV1 = {
  "target": {
    "kind": "selector",
    "selector": {
      "context": null,
      "role": "button",
      "name": null,
      "value": null,
      "identifier": null,
      "text": {
        "value": "sign",
        "mode": "contains"
      },
      "css": null
    }
  }
} satisfies TapElementArguments;

/** action.tap-element.result.v1 (models/tap-element-result-v1.json) */
export const actionTapElementResultV1 = {
  "element": {
    "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
    "context": {
      "contextKind": "native",
      "contextId": "mock-app",
      "documentEpoch": "mock-epoch-1"
    },
    "stableNodeId": "sign-in"
  }
} satisfies TapElementResult;

/** action.clear-element.arguments.v1 (models/clear-element-arguments-v1.json) */
export const actionClearElementArgumentsV1 = {
  "target": {
    "kind": "node",
    "node": {
      "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
      "context": {
        "contextKind": "native",
        "contextId": "mock-app",
        "documentEpoch": "mock-epoch-1"
      },
      "stableNodeId": "username"
    }
  }
} satisfies ClearElementArguments;

/** action.clear-element.result.v1 (models/clear-element-result-v1.json) */
export const actionClearElementResultV1 = {
  "element": {
    "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
    "context": {
      "contextKind": "native",
      "contextId": "mock-app",
      "documentEpoch": "mock-epoch-1"
    },
    "stableNodeId": "username"
  }
} satisfies ClearElementResult;

/** action.set-element-value.arguments.v1 (models/set-element-value-arguments-v1.json) */
export const actionSetElementValueArgumentsV1 = {
  "target": {
    "kind": "selector",
    "selector": {
      "context": null,
      "role": null,
      "name": null,
      "value": null,
      "identifier": "username",
      "text": null,
      "css": null
    }
  },
  "value": "alice"
} satisfies SetElementValueArguments;

/** action.set-element-value.result.v1 (models/set-element-value-result-v1.json) */
export const actionSetElementValueResultV1 = {
  "element": {
    "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
    "context": {
      "contextKind": "native",
      "contextId": "mock-app",
      "documentEpoch": "mock-epoch-1"
    },
    "stableNodeId": "username"
  }
} satisfies SetElementValueResult;

/** action.wait-for-element.arguments.v1 (models/wait-for-element-arguments-v1.json) */
export const actionWaitForElementArgumentsV1 = {
  "selector": {
    "context": {
      "contextKind": "web",
      "contextId": "page-1"
    },
    "role": null,
    "name": null,
    "value": null,
    "identifier": null,
    "text": null,
    "css": "button[data-test=\"checkout\"]"
  },
  "condition": "enabled"
} satisfies WaitForElementArguments;

/** action.wait-for-element.result.v1 (models/wait-for-element-result-v1.json) */
export const actionWaitForElementResultV1 = {
  "matched": true,
  "condition": "enabled",
  "element": {
    "observationId": "019593e3-4520-7c89-9f58-fe5012c8063e",
    "context": {
      "contextKind": "web",
      "contextId": "page-1",
      "documentEpoch": "nav-3"
    },
    "stableNodeId": "dom:button[3]"
  }
} satisfies WaitForElementResult;

/** rpc.ui-snapshot-get.request.v1 (rpc/ui-snapshot-get-v1.request.json) */
export const rpcUiSnapshotGetRequestV1 = {
  "jsonrpc": "2.0",
  "id": 17,
  "method": "ui.snapshot.get",
  "params": {
    "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb"
  }
} satisfies UiSnapshotGetRequest;

/** rpc.ui-snapshot-get.response.v1 (rpc/ui-snapshot-get-v1.response.json) */
export const rpcUiSnapshotGetResponseV1 = {
  "jsonrpc": "2.0",
  "id": 17,
  "result": {
    "formatVersion": 1,
    "observationId": "0195944f-a030-7233-b3d9-1d418fd1dbcb",
    "context": {
      "contextKind": "native",
      "contextId": "mock-app",
      "documentEpoch": "mock-epoch-1"
    },
    "rootStableNodeIds": [
      "app"
    ],
    "nodes": [
      {
        "stableNodeId": "app",
        "parentStableNodeId": null,
        "role": "application",
        "name": "Mock Login",
        "value": null,
        "identifier": "app",
        "text": null,
        "bounds": {
          "x": 0.0,
          "y": 0.0,
          "width": 720.0,
          "height": 1280.0
        },
        "enabled": true,
        "hittable": false
      },
      {
        "stableNodeId": "title",
        "parentStableNodeId": "app",
        "role": "staticText",
        "name": null,
        "value": null,
        "identifier": "title",
        "text": "Sign in",
        "bounds": {
          "x": 60.0,
          "y": 120.0,
          "width": 600.0,
          "height": 80.0
        },
        "enabled": true,
        "hittable": false
      },
      {
        "stableNodeId": "username",
        "parentStableNodeId": "app",
        "role": "textField",
        "name": "Username",
        "value": "alice",
        "identifier": "username",
        "text": null,
        "bounds": {
          "x": 60.0,
          "y": 280.0,
          "width": 600.0,
          "height": 96.0
        },
        "enabled": true,
        "hittable": true
      },
      {
        "stableNodeId": "password",
        "parentStableNodeId": "app",
        "role": "secureTextField",
        "name": "Password",
        "value": "••••••••",
        "identifier": "password",
        "text": null,
        "bounds": {
          "x": 60.0,
          "y": 420.0,
          "width": 600.0,
          "height": 96.0
        },
        "enabled": true,
        "hittable": true
      },
      {
        "stableNodeId": "sign-in",
        "parentStableNodeId": "app",
        "role": "button",
        "name": "Sign in",
        "value": null,
        "identifier": "sign-in",
        "text": "Sign in",
        "bounds": {
          "x": 60.0,
          "y": 580.0,
          "width": 600.0,
          "height": 100.0
        },
        "enabled": true,
        "hittable": true
      },
      {
        "stableNodeId": "help",
        "parentStableNodeId": "app",
        "role": "button",
        "name": "Help",
        "value": null,
        "identifier": "help",
        "text": "Help",
        "bounds": {
          "x": 60.0,
          "y": 720.0,
          "width": 280.0,
          "height": 80.0
        },
        "enabled": false,
        "hittable": false
      },
      {
        "stableNodeId": "status",
        "parentStableNodeId": "app",
        "role": "staticText",
        "name": null,
        "value": null,
        "identifier": "status",
        "text": "",
        "bounds": {
          "x": 60.0,
          "y": 860.0,
          "width": 600.0,
          "height": 60.0
        },
        "enabled": true,
        "hittable": false
      }
    ]
  }
} satisfies UiSnapshotGetResponse;

/** rpc.verdict-record.request.v1 (rpc/verdict-record-v1.request.json) */
export const rpcVerdictRecordRequestV1 = {
  "jsonrpc": "2.0",
  "id": 18,
  "method": "verdict.record",
  "params": {
    "verdict": {
      "status": "pass",
      "summary": "Signing in as alice reaches the home screen and shows the welcome text.",
      "evidence": [
        {
          "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
          "mediaType": "image/png",
          "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
          "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
        }
      ]
    }
  }
} satisfies VerdictRecordRequest;

/** rpc.verdict-record.response.v1 (rpc/verdict-record-v1.response.json) */
export const rpcVerdictRecordResponseV1 = {
  "jsonrpc": "2.0",
  "id": 18,
  "result": {
    "event": {
      "eventId": "0195944f-dbf4-7d89-afcc-8e073dab946a",
      "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "sequence": 14,
      "requestId": 18,
      "deviceId": "mock-1",
      "atMs": 1741950016500,
      "payload": {
        "type": "verdictRecorded",
        "verdict": {
          "status": "pass",
          "summary": "Signing in as alice reaches the home screen and shows the welcome text.",
          "evidence": [
            {
              "id": "sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
              "mediaType": "image/png",
              "uri": "devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81",
              "sha256": "f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"
            }
          ]
        }
      }
    }
  }
} satisfies VerdictRecordResponse;

/** rpc.devices-list.response.selected.v1 (rpc/devices-list-selected-v1.response.json) */
export const rpcDevicesListResponseSelectedV1 = {
  "jsonrpc": "2.0",
  "id": "list-after-select",
  "result": {
    "devices": [
      {
        "id": "mock-1",
        "name": "Mock Device",
        "platform": {
          "kind": "mock"
        },
        "osVersion": "1.0",
        "connected": false
      }
    ],
    "selectedDeviceId": "mock-1"
  }
} satisfies DevicesListResponse;

/** rpc.failure.unreadable-id.v1 (rpc/failure-unreadable-id-v1.json) */
export const rpcFailureUnreadableIdV1 = {
  "jsonrpc": "2.0",
  "id": null,
  "error": {
    "code": -32600,
    "message": "id must be a string or a non-negative JavaScript-safe integer",
    "data": {
      "code": "invalid_request",
      "message": "id must be a string or a non-negative JavaScript-safe integer",
      "retryable": false,
      "details": {
        "field": "id"
      }
    }
  }
} satisfies RpcResponse;

/** stream.terminal.session-ended.notification.v1 (stream/events-stream-terminal-session-ended-v1.notification.json) */
export const streamTerminalSessionEndedNotificationV1 = {
  "jsonrpc": "2.0",
  "method": "events.stream.terminal",
  "params": {
    "subscriptionId": "0195944f-a2ba-7729-85a3-79350ef519ec",
    "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
    "lastEmittedCursor": {
      "streamEpoch": "01959418-ad00-77d1-8b8a-cc079f7fce21",
      "sessionId": "0195944f-9b80-736e-8db8-df93edd56cd5",
      "sequence": 16
    },
    "termination": {
      "reason": "sessionEnded"
    }
  }
} satisfies EventsStreamTerminalNotification;

/** device.device-info.web.v1 (models/device-info-web-v1.json) */
export const deviceDeviceInfoWebV1 = {
  "id": "chromium-1",
  "name": "Chromium 134 (headless)",
  "platform": {
    "kind": "web"
  },
  "osVersion": null,
  "connected": false
} satisfies DeviceInfo;
