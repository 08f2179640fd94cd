// A bearer-token gate in front of a streamable-HTTP MCP server, for the engine's tests:
// a request without `Authorization: Bearer $MCP_EXPECTED_TOKEN` gets 401; the others are
// forwarded to 127.0.0.1:$MCP_UPSTREAM_PORT. Listens on 127.0.0.1 and prints its port.
import http from "node:http";

const token = process.env.MCP_EXPECTED_TOKEN;
const upstream = Number(process.env.MCP_UPSTREAM_PORT);

const server = http.createServer((req, res) => {
  if (!token || req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401, { "content-type": "text/plain" });
    res.end("missing or wrong bearer token\n");
    return;
  }
  const forward = http.request(
    { host: "127.0.0.1", port: upstream, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on("error", (error) => {
    res.writeHead(502, { "content-type": "text/plain" });
    res.end(`upstream: ${error}\n`);
  });
  req.pipe(forward);
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
