import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { loadConfig, setUnauthorizedHandler } from './api.js';
import { ApiKeysPage } from './pages/api-keys.js';
import { InboundFilesPage } from './pages/bank-link.js';
import { EmployeeDetailPage } from './pages/employee-detail.js';
import { EmployeesPage } from './pages/employees.js';
import { EventDetailPage, EventsPage } from './pages/events.js';
import { FilesPage } from './pages/files.js';
import { LogsPage } from './pages/logs.js';
import { PayrollDetailPage } from './pages/payroll-detail.js';
import { PayrollsPage } from './pages/payrolls.js';
import { SettingsPage } from './pages/settings.js';
import { SignInPage } from './pages/sign-in.js';
import { SubmitPayrollPage } from './pages/submit-payroll.js';
import { WebhooksPage } from './pages/webhooks.js';
import { currentRoute, navigate, routePath, routeQuery } from './router.js';
import { clearToken, environmentOf, readToken } from './session.js';
import { PageTitle } from './ui.js';
import './styles.css';

const NAV: { section: string; links: { path: string; label: string }[] }[] = [
  {
    section: 'Developer',
    links: [
      { path: '/keys', label: 'API keys' },
      { path: '/logs', label: 'Logs' },
    ],
  },
  {
    section: 'Integrations',
    links: [
      { path: '/webhooks', label: 'Webhooks' },
      { path: '/events', label: 'Events' },
    ],
  },
  {
    section: 'Payroll',
    links: [
      { path: '/payrolls', label: 'Payrolls' },
      { path: '/employees', label: 'Employees' },
      { path: '/files', label: 'Files' },
      // Not "Bank files": a label holding another's name ("Files") makes finding that one by name ambiguous.
      { path: '/bank-files', label: 'From the bank' },
    ],
  },
  { section: 'Organization', links: [{ path: '/settings', label: 'Settings' }] },
];

/** A path segment of the address, decoded; null for one that is not valid percent-encoding (`%E0`). */
function segment(route: string, pattern: RegExp): string | null {
  const m = pattern.exec(route);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

/** The page at `route`: its path picks the page; a page that keeps filters in the address reads them from its query. */
function Page({ route: full }: { route: string }) {
  const route = routePath(full);
  if (route === '/payrolls/new') return <SubmitPayrollPage />;
  const payrollId = segment(route, /^\/payrolls\/([^/]+)$/);
  if (payrollId !== null) return <PayrollDetailPage payrollId={payrollId} />;
  const employeeId = segment(route, /^\/employees\/([^/]+)$/);
  if (employeeId !== null) return <EmployeeDetailPage employeeId={employeeId} />;
  const eventId = segment(route, /^\/events\/([^/]+)$/);
  if (eventId !== null) return <EventDetailPage eventId={eventId} />;
  switch (route) {
    case '/keys':
      return <ApiKeysPage />;
    case '/logs':
      return <LogsPage />;
    case '/webhooks':
      return <WebhooksPage />;
    case '/events':
      return <EventsPage />;
    case '/payrolls':
      return <PayrollsPage />;
    case '/employees':
      return <EmployeesPage />;
    case '/settings':
      return <SettingsPage />;
    case '/files':
      return <FilesPage query={routeQuery(full)} />;
    case '/bank-files':
      return <InboundFilesPage />;
    case '/':
      return <PayrollsPage />;
    default:
      return <NotFoundPage route={route} />;
  }
}

/** An address the dashboard has no page for says so, instead of quietly showing another page. */
function NotFoundPage({ route }: { route: string }) {
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p data-testid="not-found">
        The dashboard has no page at <code>#{route}</code>. Use the navigation, or go to{' '}
        <a href="#/payrolls">Payrolls</a>.
      </p>
    </>
  );
}

function App() {
  const [route, setRoute] = useState(currentRoute());
  const [token, setToken] = useState(readToken());
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    const onHash = () => {
      setRoute(currentRoute());
      setToken(readToken());
    };
    window.addEventListener('hashchange', onHash);
    setUnauthorizedHandler((message) => {
      setNotice(message);
      setToken(null);
      navigate('/sign-in');
    });
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    const page = NAV.flatMap((s) => s.links).find((l) => routePath(route).startsWith(l.path));
    document.title =
      !token || route === '/sign-in'
        ? 'Sign in · Payroll dashboard'
        : `${page?.label ?? (routePath(route) === '/' ? 'Payrolls' : 'Page not found')} · Payroll dashboard`;
  }, [route, token]);

  if (!token || route === '/sign-in') {
    return (
      <SignInPage
        notice={notice}
        onSignedIn={() => {
          setNotice(null);
          setToken(readToken());
          navigate(route === '/sign-in' || route === '/' ? '/payrolls' : route);
        }}
      />
    );
  }

  const environment = environmentOf(token);
  const signOut = () => {
    clearToken();
    setToken(null);
    setNotice('You are signed out.');
    navigate('/sign-in');
  };
  return (
    <div class="shell">
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link; the click moves focus without touching the hash router */}
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">
          Payroll API <span class="brand-sub">Dashboard</span>
        </span>
        {environment && (
          <span class={`env env-${environment}`} title="The environment of the signed-in token">
            {environment}
          </span>
        )}
        <button type="button" class="button topbar-signout" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav class="sidebar" aria-label="Main">
        {NAV.map((section) => (
          <div class="nav-section" key={section.section}>
            <p class="nav-heading" id={`nav-${section.section}`}>
              {section.section}
            </p>
            <ul aria-labelledby={`nav-${section.section}`}>
              {section.links.map((link) => {
                const path = routePath(route);
                const current =
                  path === link.path || path.startsWith(`${link.path}/`) || (path === '/' && link.path === '/payrolls');
                return (
                  <li key={link.path}>
                    <a href={`#${link.path}`} aria-current={current ? 'page' : undefined}>
                      {link.label}
                    </a>
                  </li>
                );
              })}
            </ul>
          </div>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>
        {/* Keyed by the page, not its query: a filter kept in the address changes the list, not the page (focus stays). */}
        <Page key={routePath(route)} route={route} />
      </main>
    </div>
  );
}

void loadConfig().then(() => render(<App />, document.getElementById('app')!));
