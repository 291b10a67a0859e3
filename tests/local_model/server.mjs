// An OpenAI-compatible chat server over llama.cpp, for guard's real-model tests and docs/local-models.md.
//
//   node server.mjs MODEL.gguf PORT
//
// llama.cpp comes prebuilt from npm (node-llama-cpp with @node-llama-cpp/linux-x64; nothing is compiled or
// downloaded at run time). It speaks the part of OpenAI's chat API guard uses, as llama.cpp's own llama-server
// does: POST /v1/chat/completions with max_tokens (generation stops there, finish_reason "length"),
// temperature and response_format (json_schema and json_object constrain the output with a grammar; a schema
// the grammar cannot express is refused with a 400, as servers that do not support one answer), GET /v1/models.
// One request is generated at a time; a client that hangs up stops its generation.
import http from "node:http";
import os from "node:os";
import path from "node:path";
import {getLlama, LlamaChatSession} from "node-llama-cpp";

const [modelPath, port = "8080"] = process.argv.slice(2);
if (!modelPath) {
  console.error("usage: node server.mjs MODEL.gguf [PORT]");
  process.exit(2);
}
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
// the CPUs this process may use (node-llama-cpp's default counts the host's cores, which stalls a small container)
const threads = Number(process.env.LLAMA_THREADS) || os.availableParallelism();
const context = await model.createContext({contextSize: 4096, sequences: 1, threads});
const sequence = context.getSequence();
const name = path.basename(modelPath);
const grammars = new Map();
let queue = Promise.resolve();

function text(content) {
  return Array.isArray(content) ? content.map((part) => part?.text ?? "").join("") : String(content ?? "");
}

async function grammarFor(format) {
  if (!format || format.type === "text") return undefined;
  const key = JSON.stringify(format);
  if (!grammars.has(key)) {
    grammars.set(key, format.type === "json_schema" ? llama.createGrammarForJsonSchema(format.json_schema?.schema ?? {}) : llama.getGrammarFor("json"));
  }
  return grammars.get(key);
}

async function complete(body, signal) {
  const messages = body.messages ?? [];
  const system = messages.filter((m) => m.role === "system").map((m) => text(m.content)).join("\n");
  const turns = messages.filter((m) => m.role !== "system");
  const last = turns.pop();
  const history = [{type: "system", text: system}];
  for (const turn of turns) history.push(turn.role === "assistant" ? {type: "model", response: [text(turn.content)]} : {type: "user", text: text(turn.content)});
  const grammar = await grammarFor(body.response_format);
  const session = new LlamaChatSession({contextSequence: sequence, autoDisposeSequence: false});
  try {
    session.setChatHistory(history);
    const answer = await session.promptWithMeta(text(last?.content), {
      maxTokens: body.max_tokens ?? 512, temperature: body.temperature ?? 0, grammar, signal, stopOnAbortSignal: true,
    });
    const promptTokens = model.tokenize(system + messages.map((m) => text(m.content)).join("\n")).length;
    return {
      id: `chatcmpl-${Date.now()}`, object: "chat.completion", created: Math.floor(Date.now() / 1000), model: name,
      system_fingerprint: "node-llama-cpp-3.21.1",
      choices: [{index: 0, message: {role: "assistant", content: answer.responseText}, finish_reason: answer.stopReason === "maxTokens" ? "length" : "stop"}],
      usage: {prompt_tokens: promptTokens, completion_tokens: model.tokenize(answer.responseText).length},
    };
  } finally {
    session.dispose({disposeSequence: false});
    await sequence.clearHistory();
  }
}

function send(res, status, payload) {
  const data = JSON.stringify(payload);
  res.writeHead(status, {"Content-Type": "application/json", "Content-Length": Buffer.byteLength(data)});
  res.end(data);
}

const server = http.createServer((req, res) => {
  if (req.method === "GET" && req.url.replace(/\/$/, "").endsWith("/models")) return send(res, 200, {object: "list", data: [{id: name, object: "model", owned_by: "llama.cpp"}]});
  if (req.method !== "POST" || !req.url.replace(/\/$/, "").endsWith("/chat/completions")) return send(res, 404, {error: {message: `no route ${req.url}`, type: "not_found"}});
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch (error) {
      return send(res, 400, {error: {message: `bad JSON body: ${error.message}`, type: "invalid_request_error"}});
    }
    const hungUp = new AbortController();
    res.on("close", () => hungUp.abort());
    queue = queue.then(async () => {
      if (hungUp.signal.aborted) return;
      try {
        send(res, 200, await complete(body, hungUp.signal));
      } catch (error) {
        const schema = /schema|grammar/i.test(String(error?.message));
        if (!res.headersSent) send(res, schema ? 400 : 500, {error: {message: String(error?.message ?? error), type: schema ? "invalid_request_error" : "server_error"}});
      }
    });
  });
});
server.listen(Number(port), "127.0.0.1", () => console.log(`http://127.0.0.1:${server.address().port}/v1`));
