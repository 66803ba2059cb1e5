"""Engineering calculations for mine and tunnel ventilation.

Pure functions over plain data (DESIGN.md): no agent, no database, no I/O beyond reading the
files a caller hands in. Sub-packages and modules:

* :mod:`ventapp.domain.network` — steady-state airflow network solver and its command line;
* :mod:`ventapp.domain.airways` — airway resistance from geometry, shock losses, series/parallel;
* :mod:`ventapp.domain.fans` — fan laws and the operating point against a system curve;
* :mod:`ventapp.domain.demand` — airflow demand, natural ventilation pressure, velocity checks;
* :mod:`ventapp.domain.regulations` — regulation tables as data, with their sources.
"""
