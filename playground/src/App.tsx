import { useRef, useState } from 'react';
import { Chat } from './Chat';
import { Jobs } from './Jobs';
import { initialSettings, type Settings } from './settings';

const fields: Array<{ name: keyof Settings; label: string; secret?: boolean }> = [
  { name: 'apiUrl', label: 'API base URL' },
  { name: 'domain', label: 'Docs domain' },
  { name: 'projectId', label: 'Project id' },
  { name: 'assistantKey', label: 'Assistant key', secret: true },
  { name: 'adminKey', label: 'Admin key', secret: true },
];

export function App() {
  const [settings, setSettings] = useState(() => initialSettings(window.location));
  // The chat transport is built once and reads the latest settings at send time, so editing them keeps the thread.
  const latest = useRef(settings);
  latest.current = settings;
  return (
    <main>
      <h1>docent playground</h1>
      <fieldset className="settings">
        <legend>Connection</legend>
        {fields.map((f) => (
          <label key={f.name}>
            {f.label}
            <input name={f.name} type={f.secret ? 'password' : 'text'} autoComplete="off" value={settings[f.name]} onChange={(e) => setSettings({ ...settings, [f.name]: e.target.value.trim() })} />
          </label>
        ))}
      </fieldset>
      <div className="panes">
        <Chat settings={latest} />
        <Jobs settings={settings} />
      </div>
    </main>
  );
}
