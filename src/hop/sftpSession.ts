import type { Client, SFTPWrapper } from "ssh2";
import { keepErrorListener } from "./sshErrors.ts";

/**
 * An SFTP session whose requests fail once its channel is gone: ssh2 fails the requests pending
 * when the channel closes, but one made after that would wait forever.
 */
export interface SftpSession {
  sftp: SFTPWrapper;
  request<T>(call: (done: (error: Error | null | undefined, value?: T) => void) => void): Promise<T>;
}

export function openSftp(client: Client, what: string): Promise<SftpSession> {
  return new Promise((resolve, reject) =>
    client.sftp((error, sftp) => {
      if (error) return reject(error);
      keepErrorListener(sftp, what);
      let gone: Error | undefined;
      const waiting = new Set<(error: Error) => void>();
      const onGone = () => {
        gone ??= new Error("the SFTP channel closed");
        for (const fail of waiting) fail(gone);
        waiting.clear();
      };
      sftp.once("end", onGone);
      sftp.once("close", onGone);
      const request = <T>(call: (done: (error: Error | null | undefined, value?: T) => void) => void) =>
        new Promise<T>((resolveRequest, rejectRequest) => {
          if (gone) return rejectRequest(gone);
          const fail = (reason: Error) => rejectRequest(reason);
          waiting.add(fail);
          call((failure, value) => {
            waiting.delete(fail);
            if (failure) rejectRequest(failure);
            else resolveRequest(value as T);
          });
        });
      resolve({ sftp, request });
    }),
  );
}
