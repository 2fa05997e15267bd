// server-everything, served over Streamable HTTP with sessions by its own
// transport module, on a loopback port the system picks.
process.env.PORT = '0';
const listen = (await import('node:net')).Server.prototype.listen;
// Its module listens on PORT and prints the configured port; say the real one.
(await import('node:net')).Server.prototype.listen = function (...args) {
  this.once('listening', () => console.log(`PORT ${this.address().port}`));
  return listen.apply(this, args);
};
await import('@modelcontextprotocol/server-everything/dist/transports/streamableHttp.js');
