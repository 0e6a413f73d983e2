export { defineMcpTool, fail, ok, type McpTool, type McpToolResult } from './tool';
export {
  HttpRefusal,
  exceedsElements,
  MAX_TOOL_INPUT_ELEMENTS,
  mountMcpEndpoint,
  type McpCallOutcome,
  type McpEndpointOptions,
} from './endpoint';
