import { Layout, type Viewer } from './layout.js';

const TITLES: Record<number, string> = {
  400: 'Something in the request was not right',
  401: 'Please sign in',
  403: 'You cannot do that',
  404: 'Page not found',
  405: 'Page not found',
  409: 'That could not be done',
  410: 'This link has expired',
  413: 'That was too large',
  415: 'That could not be read',
  429: 'Too many attempts',
  500: 'Something went wrong',
  503: 'The service is busy',
};

/** The dashboard's HTML answer to every error: the status, a plain sentence, and a way back. */
export function ErrorPage({ status, message, viewer, csrf }: { status: number; message: string; viewer?: Viewer | null; csrf?: string }) {
  const title = TITLES[status] ?? (status >= 500 ? TITLES[500]! : TITLES[400]!);
  return (
    <Layout title={title} viewer={viewer ?? null} csrf={csrf}>
      <p class="lead">{message}</p>
      <p>
        <a href="/dashboard">Go to the dashboard</a>
      </p>
    </Layout>
  );
}
