// @devicerail-host/protocol 0.1.0: edited copies of golden fixtures, one per line.
// Generated from schema/v1 and fixtures/manifest.json by `cargo run -p devicerail-host-schema-gen -- write`; do not edit.
import type {
  ActionCall,
  DeviceConnectRequest,
  DeviceConnectResponse,
  DeviceInfo,
  ErrorInfo,
  EventsListRequest,
  Observation,
  RpcResponse,
  SystemHelloRequest,
  TestEvent,
  UiSnapshot,
  VerdictRecordRequest,
} from "../index.js";

// Broken copies: tsc must reject each (an unused directive fails with TS2578).
// @ts-expect-error error.info.v1: drops the required member `retryable`
export const broken01 = {"code":"element_not_found","details":{"observationId":"0195944f-a030-7233-b3d9-1d418fd1dbcb","selector":{"name":"Sign out","role":"button"}},"message":"no element matches the selector (role \"button\", name \"Sign out\")"} satisfies ErrorInfo;
// @ts-expect-error error.info.v1: adds a member to a closed object
export const broken02 = {"code":"element_not_found","details":{"observationId":"0195944f-a030-7233-b3d9-1d418fd1dbcb","selector":{"name":"Sign out","role":"button"}},"extra":1,"message":"no element matches the selector (role \"button\", name \"Sign out\")","retryable":false} satisfies ErrorInfo;
// @ts-expect-error rpc.verdict-record.request.v1: uses a value outside a string enum (VerdictStatus)
export const broken03 = {"id":18,"jsonrpc":"2.0","method":"verdict.record","params":{"verdict":{"evidence":[{"id":"sha256:f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81","mediaType":"image/png","sha256":"f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81","uri":"devicerail://assets/sha256/f596ca7b858715f8a86c2b0facc5fb37c930c8e5fbd83515eab001bf9e7a8c81"}],"status":"passed","summary":"Signing in as alice reaches the home screen and shows the welcome text."}}} satisfies VerdictRecordRequest;
// @ts-expect-error event.error.v1: uses an unknown discriminant in a tagged payload
export const broken04 = {"atMs":1741950016510,"eventId":"0195944f-dbfe-7859-9a01-5160fa6ef90a","payload":{"error":{"code":"session_degraded","details":{"cancelled":1,"failed":1,"timedOut":1},"message":"the session recorded 3 terminal Action errors","retryable":false},"type":"oops"},"sequence":15,"sessionId":"0195944f-9b80-736e-8db8-df93edd56cd5"} satisfies TestEvent;
// @ts-expect-error event.error.v1: adds another variant's member to a tagged payload
export const broken05 = {"atMs":1741950016510,"eventId":"0195944f-dbfe-7859-9a01-5160fa6ef90a","payload":{"error":{"code":"session_degraded","details":{"cancelled":1,"failed":1,"timedOut":1},"message":"the session recorded 3 terminal Action errors","retryable":false},"outcome":"completed","type":"error"},"sequence":15,"sessionId":"0195944f-9b80-736e-8db8-df93edd56cd5"} satisfies TestEvent;
// @ts-expect-error event.session-ended.v1: ends a Session with an unknown outcome
export const broken06 = {"atMs":1741950017000,"eventId":"0195944f-dde8-7857-97e8-ec97e378507a","payload":{"outcome":"aborted","reason":"login smoke test finished","type":"sessionEnded"},"requestId":20,"sequence":16,"sessionId":"0195944f-9b80-736e-8db8-df93edd56cd5"} satisfies TestEvent;
// @ts-expect-error rpc.device-connect.request.v1: passes a member to a method that takes no params
export const broken07 = {"id":5,"jsonrpc":"2.0","method":"device.connect","params":{"force":true},"timeoutMs":15000} satisfies DeviceConnectRequest;
// @ts-expect-error rpc.device-connect.response.v1: carries both `result` and `error`
export const broken08 = {"error":{"code":-32000,"data":{"code":"device_unavailable","message":"offline","retryable":true},"message":"offline"},"id":5,"jsonrpc":"2.0","result":{"connected":true,"id":"mock-1","name":"Mock Device","osVersion":"1.0","platform":{"kind":"mock"}}} satisfies DeviceConnectResponse;
// @ts-expect-error rpc.failure.v1: gives a string where an integer belongs (error code)
export const broken09 = {"error":{"code":"-32000","data":{"code":"device_unavailable","details":{"adbState":"offline","deviceId":"emulator-5556"},"message":"device emulator-5556 is offline","retryable":true},"message":"device emulator-5556 is offline"},"id":27,"jsonrpc":"2.0"} satisfies RpcResponse;
// @ts-expect-error rpc.events-list.request.v1: gives a string where an integer belongs (limit)
export const broken10 = {"id":23,"jsonrpc":"2.0","method":"events.list","params":{"afterSequence":12,"limit":"2","sessionId":"0195944f-9b80-736e-8db8-df93edd56cd5"}} satisfies EventsListRequest;
// @ts-expect-error handshake.system-hello.request.v1: sends a `jsonrpc` other than "2.0"
export const broken11 = {"id":1,"jsonrpc":"1.0","method":"system.hello","params":{"client":{"name":"devicerail-cli","version":"0.1.0"},"features":{"optional":["action.protected.v1","device.routing.v1","device.semanticActions.v1","events.stream.v1","media.stream.v1","observation.uiSnapshot.v1","request.control.v1","session.export.page.v1","verdict.record.v1"],"required":["events.snapshot.v1"]},"protocol":{"ranges":[{"major":1,"maxMinor":5,"minMinor":0},{"major":2,"maxMinor":1,"minMinor":0}]}}} satisfies SystemHelloRequest;
// @ts-expect-error handshake.system-hello.request.v1: names another method in a typed request
export const broken12 = {"id":1,"jsonrpc":"2.0","method":"device.connect","params":{"client":{"name":"devicerail-cli","version":"0.1.0"},"features":{"optional":["action.protected.v1","device.routing.v1","device.semanticActions.v1","events.stream.v1","media.stream.v1","observation.uiSnapshot.v1","request.control.v1","session.export.page.v1","verdict.record.v1"],"required":["events.snapshot.v1"]},"protocol":{"ranges":[{"major":1,"maxMinor":5,"minMinor":0},{"major":2,"maxMinor":1,"minMinor":0}]}}} satisfies SystemHelloRequest;
// @ts-expect-error device.device-info.v1: names an unknown platform kind
export const broken13 = {"connected":false,"id":"emulator-5556","name":"Pixel 8 API 34","osVersion":"14","platform":{"kind":"amiga"}} satisfies DeviceInfo;
// @ts-expect-error device.observation.v1: sets a non-nullable member to null
export const broken14 = {"capturedAtMs":1741950001200,"deviceId":"mock-1","id":null,"metadata":{"orientation":"portrait","revision":3,"screen":"login"},"screenshot":{"id":"sha256:cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec","mediaType":"image/png","sha256":"cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec","uri":"devicerail://assets/sha256/cce190e6c0c58c05622ae2b09d909f5a595ff07c9deace2fff64227b98fa1fec"},"uiSnapshot":{"byteLength":1809,"context":{"contextId":"mock-app","contextKind":"native","documentEpoch":"mock-epoch-1"},"evidence":{"id":"sha256:952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15","mediaType":"application/vnd.devicerail.ui-tree+json;version=1","sha256":"952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15","uri":"devicerail://assets/sha256/952d19d94831230720de68ac45b0a14de6151d790c7cab2c89d34d17ab2fef15"},"formatVersion":1,"nodeCount":7},"viewport":{"height":1280,"scaleFactor":2.0,"width":720}} satisfies Observation;
// @ts-expect-error ui.snapshot.v1: gives a string for a number inside an array element
export const broken15 = {"context":{"contextId":"mock-app","contextKind":"native","documentEpoch":"mock-epoch-1"},"formatVersion":1,"nodes":[{"bounds":{"height":1280.0,"width":720.0,"x":0.0,"y":0.0},"enabled":true,"hittable":false,"identifier":"app","name":"Mock Login","parentStableNodeId":null,"role":"application","stableNodeId":"app","text":null,"value":null},{"bounds":{"height":80.0,"width":600.0,"x":"60","y":120.0},"enabled":true,"hittable":false,"identifier":"title","name":null,"parentStableNodeId":"app","role":"staticText","stableNodeId":"title","text":"Sign in","value":null},{"bounds":{"height":96.0,"width":600.0,"x":60.0,"y":280.0},"enabled":true,"hittable":true,"identifier":"username","name":"Username","parentStableNodeId":"app","role":"textField","stableNodeId":"username","text":null,"value":"alice"},{"bounds":{"height":96.0,"width":600.0,"x":60.0,"y":420.0},"enabled":true,"hittable":true,"identifier":"password","name":"Password","parentStableNodeId":"app","role":"secureTextField","stableNodeId":"password","text":null,"value":"••••••••"},{"bounds":{"height":100.0,"width":600.0,"x":60.0,"y":580.0},"enabled":true,"hittable":true,"identifier":"sign-in","name":"Sign in","parentStableNodeId":"app","role":"button","stableNodeId":"sign-in","text":"Sign in","value":null},{"bounds":{"height":80.0,"width":280.0,"x":60.0,"y":720.0},"enabled":false,"hittable":false,"identifier":"help","name":"Help","parentStableNodeId":"app","role":"button","stableNodeId":"help","text":"Help","value":null},{"bounds":{"height":60.0,"width":600.0,"x":60.0,"y":860.0},"enabled":true,"hittable":false,"identifier":"status","name":null,"parentStableNodeId":"app","role":"staticText","stableNodeId":"status","text":"","value":null}],"observationId":"0195944f-a030-7233-b3d9-1d418fd1dbcb","rootStableNodeIds":["app"]} satisfies UiSnapshot;
// @ts-expect-error ui.snapshot.v1: gives a string where an array belongs
export const broken16 = {"context":{"contextId":"mock-app","contextKind":"native","documentEpoch":"mock-epoch-1"},"formatVersion":1,"nodes":[{"bounds":{"height":1280.0,"width":720.0,"x":0.0,"y":0.0},"enabled":true,"hittable":false,"identifier":"app","name":"Mock Login","parentStableNodeId":null,"role":"application","stableNodeId":"app","text":null,"value":null},{"bounds":{"height":80.0,"width":600.0,"x":60.0,"y":120.0},"enabled":true,"hittable":false,"identifier":"title","name":null,"parentStableNodeId":"app","role":"staticText","stableNodeId":"title","text":"Sign in","value":null},{"bounds":{"height":96.0,"width":600.0,"x":60.0,"y":280.0},"enabled":true,"hittable":true,"identifier":"username","name":"Username","parentStableNodeId":"app","role":"textField","stableNodeId":"username","text":null,"value":"alice"},{"bounds":{"height":96.0,"width":600.0,"x":60.0,"y":420.0},"enabled":true,"hittable":true,"identifier":"password","name":"Password","parentStableNodeId":"app","role":"secureTextField","stableNodeId":"password","text":null,"value":"••••••••"},{"bounds":{"height":100.0,"width":600.0,"x":60.0,"y":580.0},"enabled":true,"hittable":true,"identifier":"sign-in","name":"Sign in","parentStableNodeId":"app","role":"button","stableNodeId":"sign-in","text":"Sign in","value":null},{"bounds":{"height":80.0,"width":280.0,"x":60.0,"y":720.0},"enabled":false,"hittable":false,"identifier":"help","name":"Help","parentStableNodeId":"app","role":"button","stableNodeId":"help","text":"Help","value":null},{"bounds":{"height":60.0,"width":600.0,"x":60.0,"y":860.0},"enabled":true,"hittable":false,"identifier":"status","name":null,"parentStableNodeId":"app","role":"staticText","stableNodeId":"status","text":"","value":null}],"observationId":"0195944f-a030-7233-b3d9-1d418fd1dbcb","rootStableNodeIds":"app"} satisfies UiSnapshot;
// @ts-expect-error device.device-info.v1: adds a member to an object the JSON Schema leaves open (typed closed)
export const broken17 = {"connected":false,"id":"emulator-5556","name":"Pixel 8 API 34","osVersion":"14","platform":{"kind":"android"},"serial":"abc"} satisfies DeviceInfo;

// Valid variants: tsc must accept each.
// error.info.v1: `details` is any JSON value, including null
export const valid01 = {"code":"element_not_found","details":null,"message":"no element matches the selector (role \"button\", name \"Sign out\")","retryable":false} satisfies ErrorInfo;
// action.call.v1: `arguments` is any JSON value, including an array
export const valid02 = {"arguments":[1,"x",null],"id":"701d2bce-7d9d-438e-ad7c-1778fb2f7505","name":"inputText"} satisfies ActionCall;
// handshake.system-hello.request.v1: a request id may be a string
export const valid03 = {"id":"hello-1","jsonrpc":"2.0","method":"system.hello","params":{"client":{"name":"devicerail-cli","version":"0.1.0"},"features":{"optional":["action.protected.v1","device.routing.v1","device.semanticActions.v1","events.stream.v1","media.stream.v1","observation.uiSnapshot.v1","request.control.v1","session.export.page.v1","verdict.record.v1"],"required":["events.snapshot.v1"]},"protocol":{"ranges":[{"major":1,"maxMinor":5,"minMinor":0},{"major":2,"maxMinor":1,"minMinor":0}]}}} satisfies SystemHelloRequest;
// rpc.device-connect.request.v1: a method without params accepts `[]`
export const valid04 = {"id":5,"jsonrpc":"2.0","method":"device.connect","params":[],"timeoutMs":15000} satisfies DeviceConnectRequest;
// rpc.device-connect.request.v1: optional members may be left out
export const valid05 = {"id":5,"jsonrpc":"2.0","method":"device.connect","params":{}} satisfies DeviceConnectRequest;
