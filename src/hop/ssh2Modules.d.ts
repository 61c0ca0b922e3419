// The two files of ssh2 a hop uses, loaded without its index (which also loads its server, key
// generator and HTTP agents); typed by @types/ssh2's declarations of the same objects.
declare module "ssh2/lib/client.js" {
  import type { Client } from "ssh2";
  const ClientClass: typeof Client;
  export default ClientClass;
}
declare module "ssh2/lib/protocol/keyParser.js" {
  import type { utils } from "ssh2";
  export const parseKey: typeof utils.parseKey;
}
