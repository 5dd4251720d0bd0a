import { WebSocketServer } from 'ws';
const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' }, () => console.log(wss.address().port));
wss.on('connection', (ws) => ws.on('message', (d, bin) => ws.send(bin ? d : 'echo:' + d.toString())));
