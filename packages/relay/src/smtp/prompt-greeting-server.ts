import type { Socket } from "node:net";
import { SMTPServer } from "smtp-server";
import { SMTPConnection, type SMTPConnectionOptions } from "smtp-server/lib/smtp-connection.js";

/**
 * An `SMTPServer` that greets as soon as a connection is admitted. smtp-server holds every
 * greeting 100 ms to catch clients that talk first, a defence of public MX ports against spam
 * bots; a submission port serves authenticated clients, and Postfix's submission service greets
 * at once. With one message per connection (as `smtp-source` and most application mailers
 * send), that pause alone kept a session under 10 messages a second and the relay idle half
 * the time. A command sent before the greeting is still refused ("You talk too soon").
 *
 * NOTE: `connect` is smtp-server's own (3.21) with `init()` replaced by its body minus the timer.
 */
export class PromptGreetingServer extends SMTPServer {
  override connect(socket: Socket, socketOptions?: SMTPConnectionOptions | null): void {
    const connection = new SMTPConnection(this, socket, socketOptions);
    this.connections.add(connection);
    connection.on("error", (error: Error) => this._onError(error));
    connection.on("connect", (data) => this._onClientConnect(data));
    connection._setListeners(() => {
      const { maxClients } = this.options;
      if (maxClients && this.connections.size > maxClients) {
        connection.send(
          421,
          `${connection.name} Too many connected clients, try again in a moment`,
          false,
        );
        return;
      }
      connection.connectionReady();
    });
  }
}
